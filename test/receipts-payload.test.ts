/**
 * The receipt payload builder and the minter without HTTP: every field present,
 * canonical bytes that the portable verifier accepts, did:web naming, and a
 * failing external TSA that must not fail the mint.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { servicesLayer } from "../src/app.js"
import { loadConfig } from "../src/platform/config.js"
import { platformDid } from "../src/platform/did-web.js"
import { setLogLevel } from "../src/platform/log.js"
import type { ReceiptContent } from "../src/receipts/ports.js"
import { ReceiptMinter } from "../src/receipts/ports.js"
import { buildReceiptPayload } from "../src/receipts/service.js"
import { canonicalJsonBytes, generateSigningKey, importSigningKey, signPayload } from "../src/receipts/signing.js"
import { receiptByUuid } from "../src/receipts/store.js"
import { freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { receiptContent } from "./support/receipt-content.js"

const PAYLOAD_FIELDS = [
  "receipt_version", "receipt_uuid", "receipt_status", "action_uuid", "org_uuid", "agent_id", "agent_version",
  "action_type", "action_details_hash", "instruction_hash", "model_id", "model_version", "outcome", "outcome_hash",
  "output_scan_flags", "policy_uuid", "approval", "parent_payload_hash", "agent_sequence", "previous_payload_hash",
  "created_at"
].sort()

const hash = fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => `sha256:${hex}`)
const text = fc.string({ maxLength: 40 })

const contentArbitrary: fc.Arbitrary<ReceiptContent> = fc.record({
  receipt_status: fc.constantFrom("notarized", "failed", "denied", "denied_by_human"),
  action_uuid: text,
  org_uuid: text,
  agent_id: fc.option(text, { nil: null }),
  agent_version: fc.option(text, { nil: null }),
  action_type: text,
  action_details_hash: hash,
  instruction_hash: fc.option(hash, { nil: null }),
  model_id: fc.option(text, { nil: null }),
  model_version: fc.option(text, { nil: null }),
  outcome: fc.constantFrom("completed", "failed", null),
  outcome_hash: fc.option(hash, { nil: null }),
  output_scan_flags: fc.option(fc.array(fc.dictionary(text, fc.oneof(text, fc.integer(), fc.boolean())), { maxLength: 3 }), { nil: null }),
  policy_uuid: fc.option(text, { nil: null }),
  approval: fc.option(
    fc.record({
      decision: fc.constantFrom("approved", "denied"),
      by: fc.option(text, { nil: null }),
      at: text,
      via: fc.constantFrom("code", "token", "dashboard", "expiry"),
      reason: fc.option(text, { nil: null })
    }),
    { nil: null }
  ),
  parent_payload_hash: fc.option(hash, { nil: null }),
  agent_sequence: fc.integer({ min: 1, max: 1_000_000 }),
  previous_payload_hash: fc.option(hash, { nil: null })
}) as fc.Arbitrary<ReceiptContent>

describe("buildReceiptPayload", () => {
  const signer = importSigningKey(generateSigningKey().privateKeyPkcs8Der)

  it("has every field, never undefined, and signs bytes the portable verifier accepts", () => {
    fc.assert(
      fc.property(contentArbitrary, (content) => {
        const payload = buildReceiptPayload(content, "rct_x", "2026-01-01T00:00:00.000Z")
        expect(Object.keys(payload).sort()).toEqual(PAYLOAD_FIELDS)
        expect(Object.values(payload).some((value) => value === undefined)).toBe(false)
        const signed = signPayload(signer, payload)
        const parsed = JSON.parse(signed.bytes.toString("utf8"))
        // What is stored (the canonical text) re-canonicalizes to itself.
        expect(canonicalJsonBytes(parsed).equals(signed.bytes)).toBe(true)
        const result = verifyReceipt({ signed_payload: parsed, payload_hash: signed.payload_hash, signature: signed.signature, public_key: signer.publicKeyRaw })
        expect(result.valid).toBe(true)
      }),
      { numRuns: 150 }
    )
  })

  it("fills absent optional values with null", () => {
    const partial = { receipt_status: "denied", action_uuid: "act_1", org_uuid: "org", action_type: "t", action_details_hash: "sha256:00", agent_sequence: 1 }
    const payload = buildReceiptPayload(partial as unknown as ReceiptContent, "rct_1", "2026-01-01T00:00:00.000Z")
    expect(payload.approval).toBeNull()
    expect(payload.previous_payload_hash).toBeNull()
    expect(payload.receipt_version).toBe("1.1")
  })
})

describe("platformDid", () => {
  it("percent-encodes the port and drops the scheme", () => {
    expect(platformDid("https://gateway.example.com")).toBe("did:web:gateway.example.com")
    expect(platformDid("http://localhost:8080")).toBe("did:web:localhost%3A8080")
    expect(platformDid("https://gateway.example.com:443")).toBe("did:web:gateway.example.com")
  })
})

describe("an external TSA that fails", () => {
  it("stores the receipt without a token", async () => {
    setLogLevel("silent")
    const database = await freshDatabaseUrl()
    const config = loadConfig({
      ...process.env,
      BASE_URL: "https://gateway.example.com",
      DATA_DIR: UNUSED_DATA_DIR,
      MASTER_KEY: "0000000000000000000000000000000000000000000000000000000000000002",
      DATABASE_URL: database.url,
      // A private address the outbound policy refuses: the request fails before leaving.
      TSA_URL: "https://127.0.0.1:9/tsr"
    })
    const scope = Effect.runSync(Scope.make())
    try {
      const services = await Effect.runPromise(Layer.buildWithScope(servicesLayer(config), scope))
      const content = receiptContent({ receipt_status: "failed", action_uuid: "act_tsa", org_uuid: "org_tsa", action_type: "x", action_details_hash: "sha256:00", outcome: "failed" })
      const { minted, stored } = await Effect.runPromise(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const minter = yield* ReceiptMinter
          const signed = yield* minter.sign(content)
          yield* sql`${minter.insertion(signed)}`
          const minted = signed.minted
          return { minted, stored: yield* receiptByUuid(minted.receipt_uuid) }
        }).pipe(Effect.provide(services))
      )
      expect(minted.timestamp_token).toBeNull()
      expect(minted.verify_url).toBe("https://gateway.example.com/api/v1/verify/action/act_tsa")
      expect(stored?.timestamp_token).toBeNull()
      expect(stored?.signed_payload).toBe(minted.signed_payload)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await database?.drop()
    }
  }, 60_000)
})
