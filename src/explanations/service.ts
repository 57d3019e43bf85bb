/**
 * Signed explanations (CONTRACT.md "Signed explanations"). `explain` builds the five content keys
 * from what the service stored about an action and signs their JCS bytes with the receipt key, the
 * way a receipt is signed; `verify` checks one with the portable verifier against every published
 * receipt key. Nothing here stores or logs what it is asked to verify.
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Explanation } from "../../protocol/explanations.js"
import { type ExplanationVerification, verifyExplanation } from "../../protocol/verifier/explanation.js"
import { Config } from "../platform/config.js"
import { Receipts } from "../receipts/service.js"
import { signPayload } from "../receipts/signing.js"
import { explanationContent } from "./content.js"
import { ExplanationNotFound, type ExplanationsError, refuse } from "./errors.js"
import { makeExplanationsStore } from "./store.js"

export interface ExplanationsService {
  /** The signed explanation of one action of `orgUuid` (the five keys and `_envelope`); ExplanationNotFound for another organization's. */
  readonly explain: (orgUuid: string, actionUuid: string) => Effect.Effect<Explanation, ExplanationsError>
  /** Checks an explanation (already unwrapped from the request) against the JWKS keys, retired ones included. */
  readonly verify: (explanation: Record<string, unknown>) => Effect.Effect<ExplanationVerification & { readonly verified_at: string }>
}

export const makeExplanations = Effect.gen(function* () {
  const config = yield* Config
  const receipts = yield* Receipts
  const store = yield* makeExplanationsStore
  const sql = yield* SqlClient.SqlClient
  const verifyUrlOf = (actionUuid: string) => `${config.baseUrl}/api/v1/verify/action/${encodeURIComponent(actionUuid)}`

  const explain = Effect.fn("Explanations.explain")(function* (orgUuid: string, actionUuid: string) {
    const row = yield* store.action(orgUuid, actionUuid)
    if (row === undefined) return yield* refuse(ExplanationNotFound.of(actionUuid))
    const [history, cosignatures, receipt] = yield* Effect.all(
      [store.history(orgUuid, actionUuid), store.cosignatures(orgUuid, actionUuid), store.receipt(orgUuid, actionUuid)],
      { concurrency: "unbounded" }
    )
    const content = explanationContent(row, history, cosignatures, receipt, verifyUrlOf(actionUuid))
    const signed = signPayload(yield* Effect.provideService(receipts.platformSigner, SqlClient.SqlClient, sql), content)
    const generatedAt = DateTime.formatIso(yield* DateTime.now)
    return {
      ...content,
      _envelope: {
        alg: "Ed25519",
        signing_key_id: signed.public_key_id,
        content_hash: signed.payload_hash,
        signature: signed.signature,
        generated_at: generatedAt
      }
    } satisfies Explanation as Explanation
  })

  const verify = Effect.fn("Explanations.verify")(function* (explanation: Record<string, unknown>) {
    const { keys } = yield* Effect.provideService(receipts.jwks, SqlClient.SqlClient, sql)
    return { ...verifyExplanation(explanation, keys), verified_at: DateTime.formatIso(yield* DateTime.now) }
  })

  return Explanations.of({ explain, verify })
})

export class Explanations extends Context.Service<Explanations, ExplanationsService>()("gateway/Explanations") {
  static readonly layer = Layer.effect(Explanations, makeExplanations)
}
