import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { EnvelopeError, loadMasterKey, makeEnvelope, masterKeyId, parseMasterKey } from "../src/platform/envelope.js"

const tempDirs: string[] = []
const tempDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "envelope-test-"))
  tempDirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true })
})

const reasonOf = (run: () => unknown): string | undefined => {
  try {
    run()
  } catch (error) {
    if (error instanceof EnvelopeError) return error.reason
    throw error
  }
  return undefined
}

describe("envelope", () => {
  const key = new Uint8Array(randomBytes(32))
  const envelope = makeEnvelope(key)

  it("round-trips bytes and text under the same AAD", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.string(), (plaintext, aad) => {
        const sealed = envelope.seal(plaintext, aad)
        expect(sealed).toMatch(/^v1\.mk_[0-9a-f]{8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
        expect(Buffer.from(envelope.open(sealed, aad)).equals(Buffer.from(plaintext))).toBe(true)
      })
    )
    const sealed = envelope.seal("sk-provider-secret ✓", "credential:abc")
    expect(envelope.openText(sealed, "credential:abc")).toBe("sk-provider-secret ✓")
    expect(envelope.keyIdOf(sealed)).toBe(masterKeyId(key))
  })

  it("uses a fresh IV every time", () => {
    expect(envelope.seal("same", "aad")).not.toBe(envelope.seal("same", "aad"))
  })

  it("refuses a wrong AAD", () => {
    const sealed = envelope.seal("secret", "signing_key:rk_1")
    expect(reasonOf(() => envelope.open(sealed, "signing_key:rk_2"))).toBe("authentication_failed")
    expect(reasonOf(() => envelope.open(sealed, ""))).toBe("authentication_failed")
  })

  it("refuses any tampering with the ciphertext, tag or iv", () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 1, max: 255 }), (position, mask) => {
        const sealed = envelope.seal("a secret worth stealing", "aad")
        const [version, id, ivText, bodyText] = sealed.split(".")
        const iv = Buffer.from(ivText, "base64url")
        const body = Buffer.from(bodyText, "base64url")
        const all = Buffer.concat([iv, body])
        all[position % all.length] ^= mask
        const tampered = [version, id, all.subarray(0, 12).toString("base64url"), all.subarray(12).toString("base64url")].join(".")
        expect(reasonOf(() => envelope.open(tampered, "aad"))).toBe("authentication_failed")
      })
    )
  })

  it("classifies malformed and unknown-key input", () => {
    const sealed = envelope.seal("x", "aad")
    expect(reasonOf(() => envelope.open("garbage", "aad"))).toBe("malformed")
    expect(reasonOf(() => envelope.open(sealed.replace(/^v1/, "v2"), "aad"))).toBe("malformed")
    expect(reasonOf(() => envelope.open(sealed + "!", "aad"))).toBe("malformed")
    expect(reasonOf(() => envelope.open(sealed.replace(/mk_[0-9a-f]{8}/, "mk_00000000"), "aad"))).toBe("unknown_key")
  })

  it("rotation: seals with the new key, still opens what the old key sealed", () => {
    const oldKey = new Uint8Array(randomBytes(32))
    const newKey = new Uint8Array(randomBytes(32))
    const before = makeEnvelope(oldKey)
    const sealedEarlier = before.seal("old secret", "aad")

    const after = makeEnvelope(newKey, undefined, [{ key: oldKey }])
    expect(after.keyId).toBe(masterKeyId(newKey))
    expect(after.keyIds).toEqual([masterKeyId(newKey), masterKeyId(oldKey)])
    expect(after.openText(sealedEarlier, "aad")).toBe("old secret")
    const sealedNow = after.seal("new secret", "aad")
    expect(after.keyIdOf(sealedNow)).toBe(masterKeyId(newKey))
    // The old envelope alone does not know the new key.
    expect(reasonOf(() => before.open(sealedNow, "aad"))).toBe("unknown_key")
  })

  it("binds the key id: the same key under another id does not open", () => {
    const aliased = makeEnvelope(key, "mk_alias")
    const sealed = aliased.seal("x", "aad")
    const relabelled = sealed.replace("mk_alias", masterKeyId(key))
    expect(reasonOf(() => envelope.open(relabelled, "aad"))).toBe("authentication_failed")
  })

  it("rejects keys that are not 32 bytes", () => {
    expect(() => makeEnvelope(new Uint8Array(16))).toThrow(RangeError)
    expect(() => makeEnvelope(key, "bad.id")).toThrow(RangeError)
  })
})

describe("loadMasterKey", () => {
  it("creates master.key with mode 0600 on first start, then reads the same key", () => {
    const dataDir = path.join(tempDir(), "nested", "data")
    const first = loadMasterKey({ dataDir })
    expect(first.generated).toBe(true)
    expect(first.source).toBe("file")
    expect(first.key.length).toBe(32)
    expect(first.keyId).toMatch(/^mk_[0-9a-f]{8}$/)
    const file = path.join(dataDir, "master.key")
    expect(first.path).toBe(file)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64").equals(Buffer.from(first.key))).toBe(true)

    const second = loadMasterKey({ dataDir })
    expect(second.generated).toBe(false)
    expect(Buffer.from(second.key).equals(Buffer.from(first.key))).toBe(true)
  })

  it("prefers MASTER_KEY from the environment, as hex or base64", () => {
    const dataDir = tempDir()
    const raw = randomBytes(32)
    const fromHex = loadMasterKey({ MASTER_KEY: raw.toString("hex"), dataDir })
    const fromBase64 = loadMasterKey({ MASTER_KEY: raw.toString("base64"), dataDir })
    const fromBase64Url = loadMasterKey({ MASTER_KEY: raw.toString("base64url"), dataDir })
    for (const loaded of [fromHex, fromBase64, fromBase64Url]) {
      expect(loaded.source).toBe("env")
      expect(loaded.generated).toBe(false)
      expect(Buffer.from(loaded.key).equals(raw)).toBe(true)
    }
    expect(fs.existsSync(path.join(dataDir, "master.key"))).toBe(false)
  })

  it("rejects a MASTER_KEY that is not 32 bytes", () => {
    expect(() => parseMasterKey(randomBytes(16).toString("base64"))).toThrow(RangeError)
    expect(() => parseMasterKey("not a key")).toThrow(RangeError)
  })
})
