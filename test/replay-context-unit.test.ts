/**
 * The replay context without a server: what authorize keeps (nothing at all when none of the four
 * is sent), the hash the gateway and the portable verifier each compute, the 1.3 payload, and the
 * verifier's checks of a receipt's replay context.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJson, replayContextHash as portableHash, REPLAY_RECEIPT_VERSION, sha256Tagged, verifyReceipt } from "../protocol/verifier/index.js"
import { replayContextHash, replayContextOf } from "../src/actions/replay-context.js"
import { buildReceiptPayload } from "../src/receipts/service.js"
import { generateSigningKey, importSigningKey, signPayload } from "../src/receipts/signing.js"
import { receiptContent } from "./support/receipt-content.js"

const content = receiptContent({ agent_id: "bot" })

describe("replayContextOf", () => {
  it("keeps nothing when none of the four is sent, or all are null", () => {
    expect(replayContextOf({})).toBeUndefined()
    expect(replayContextOf({ system_prompt_hash: null, tool_inputs_hash: null, model_params: null, execution_env: null })).toBeUndefined()
  })

  it("keeps the fields sent and hashes the four, absent ones as null, as the portable verifier does", () => {
    const object = fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null)), { maxKeys: 4 })
    fc.assert(
      fc.property(
        fc.record({
          system_prompt_hash: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
          tool_inputs_hash: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
          model_params: fc.option(object, { nil: undefined }),
          execution_env: fc.option(object, { nil: undefined })
        }),
        (input) => {
          const kept = replayContextOf(input)
          const sent = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined))
          if (Object.keys(sent).length === 0) {
            // Returned, the assertion's value would be read as the property's verdict.
            expect(kept).toBeUndefined()
            return
          }
          expect(kept!.sdk).toEqual(sent)
          const all = { system_prompt_hash: null, tool_inputs_hash: null, model_params: null, execution_env: null, ...sent }
          expect(kept!.hash).toBe(sha256Tagged(new TextEncoder().encode(canonicalJson(all))))
          expect(kept!.hash).toBe(portableHash(input))
          expect(replayContextHash(all)).toBe(kept!.hash)
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("a 1.3 receipt", () => {
  const signer = importSigningKey(generateSigningKey().privateKeyPkcs8Der)
  const context = { system_prompt_hash: "sha256:p", model_params: { temperature: 0 } }
  const signed = (payload: Record<string, unknown>) => {
    const result = signPayload(signer, payload)
    return { signed_payload: payload, payload_hash: result.payload_hash, signature: result.signature, public_key: signer.publicKeyRaw }
  }

  it("carries replay_context_hash and version 1.3 only when the action has one", () => {
    const plain = buildReceiptPayload(content, "rct_1", "2026-01-01T00:00:00.000Z")
    expect(plain.receipt_version).toBe("1.1")
    expect(plain).not.toHaveProperty("replay_context_hash")
    const hash = portableHash(context)
    const withContext = buildReceiptPayload({ ...content, replay_context_hash: hash }, "rct_1", "2026-01-01T00:00:00.000Z")
    expect(withContext).toEqual({ ...plain, receipt_version: REPLAY_RECEIPT_VERSION, replay_context_hash: hash })
  })

  it("verifies offline, and its replay context check fails for another context or a malformed receipt", () => {
    const hash = portableHash(context)
    const payload = buildReceiptPayload({ ...content, replay_context_hash: hash }, "rct_1", "2026-01-01T00:00:00.000Z")
    const good = verifyReceipt({ ...signed(payload), replay_context: context })
    expect(good.errors).toEqual([])
    expect(good.checks.replay_context).toBe(true)
    expect(verifyReceipt(signed(payload)).checks.replay_context).toBe(true)
    expect(verifyReceipt({ ...signed(payload), replay_context: { ...context, tool_inputs_hash: "x" } }).errors).toEqual([
      `replay_context: computed ${portableHash({ ...context, tool_inputs_hash: "x" })}, receipt says ${hash}`
    ])
    // A hash in a receipt that does not say 1.3, a 1.3 receipt without one: each signed, still refused.
    expect(verifyReceipt(signed({ ...payload, receipt_version: "1.1" })).checks.replay_context).toBe(false)
    const { replay_context_hash: _hash, ...withoutHash } = payload
    expect(verifyReceipt(signed(withoutHash)).checks.replay_context).toBe(false)
  })
})
