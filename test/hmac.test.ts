/** The two-hash HMAC must give exactly `createHmac`'s bytes, for any key length and message. */
import { createHmac } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { hmacSha256Hex } from "../src/platform/hmac.js"

describe("hmacSha256Hex", () => {
  it("equals createHmac for keys shorter, equal to and longer than the block, and any UTF-8 message", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 200 }), fc.string({ unit: "grapheme", maxLength: 300 }), (key, message) => {
        expect(hmacSha256Hex(key, message)).toBe(createHmac("sha256", key).update(message, "utf8").digest("hex"))
        // Cached pads give the same answer the second time.
        expect(hmacSha256Hex(key, message)).toBe(createHmac("sha256", key).update(message, "utf8").digest("hex"))
      }),
      { numRuns: 500 }
    )
  })

  it("matches the RFC 4231 test case 2", () => {
    expect(hmacSha256Hex(Buffer.from("Jefe"), "what do ya want for nothing?")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
  })
})
