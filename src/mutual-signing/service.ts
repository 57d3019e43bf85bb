/**
 * Mutual signing: the initiating agent signs the action's JCS payload with its DID key, a
 * counterparty identified by its did:web co-signs the same bytes with the Ed25519 key of its own
 * DID document (ours read locally, others resolved through the DIDs area), and the two signatures
 * seal one receipt. Requests lapse after 24 hours.
 */
import { verify } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import type {
  MutualSignCompleted,
  MutualSignPayload,
  MutualSignReceipt,
  MutualSignRejected,
  MutualSignRequested,
  PendingMutualSign
} from "../../protocol/mutual-signing.js"
import { canonicalJson } from "../../protocol/verifier/canonical.js"
import { Actions } from "../actions/service.js"
import { ed25519PublicKey } from "../dids/keys.js"
import { Dids } from "../dids/service.js"
import { ed25519Methods } from "../dids/verification.js"
import { Config } from "../platform/config.js"
import { sha256Tagged } from "../platform/digest.js"
import {
  DidNoVerificationMethod,
  DidUnsupportedKeyFormat,
  MutualSignAlreadyRequested,
  MutualSignDidMismatch,
  type MutualSignError,
  MutualSignExpired,
  MutualSignInvalidSignature,
  MutualSignNoAgent,
  MutualSignNoDidKey,
  MutualSignNotCompleted,
  MutualSignNotFound,
  MutualSignNotPending,
  MutualSignPayloadMismatch,
  refuse
} from "./errors.js"
import { type MutualSignRow, makeMutualSignStore } from "./store.js"

const payloadBytes = (payload: MutualSignPayload) => Buffer.from(canonicalJson(payload), "utf8")

/** sha256 over the canonical payload followed by both signatures as written (`ed25519:…`). */
export const combinedReceiptHash = (payload: MutualSignPayload, initiatorSignature: string, counterpartySignature: string) =>
  sha256Tagged(Buffer.concat([payloadBytes(payload), Buffer.from(initiatorSignature, "utf8"), Buffer.from(counterpartySignature, "utf8")]))

const signatureValid = (publicKeyRaw: Uint8Array, bytes: Uint8Array, signature: string) => {
  const raw = Buffer.from(signature.slice("ed25519:".length), "base64url")
  if (raw.length !== 64) return false
  try {
    return verify(null, bytes, ed25519PublicKey(publicKeyRaw), raw)
  } catch {
    return false
  }
}

/** The Ed25519 keys of a DID document, or which of the spec's errors it earns (the rule reputation attestations share). */
const ed25519Keys = (document: Record<string, unknown>): ReadonlyArray<Uint8Array> | "none" | "unsupported" => {
  const methods = ed25519Methods(document)
  return typeof methods === "string" ? methods : methods.map((method) => method.publicKeyRaw)
}

/** A lapsed pending request shows as `expired` (stored: still pending; it can only be read). */
const shownStatus = (row: MutualSignRow, now: number): MutualSignRow["status"] | "expired" => (row.status === "pending" && Date.parse(row.expires_at) <= now ? "expired" : row.status)

export const makeMutualSigning = Effect.gen(function* () {
  const store = yield* makeMutualSignStore
  const actions = yield* Actions
  const dids = yield* Dids
  const config = yield* Config

  const load = Effect.fnUntraced(function* (actionUuid: string) {
    const row = yield* store.find(actionUuid)
    if (row === undefined) return yield* refuse(MutualSignNotFound.of(actionUuid))
    return row
  })

  /** The counterparty's keys: from its DID document, or the error the spec names. */
  const counterpartyKeys = Effect.fnUntraced(function* (actionUuid: string, did: string) {
    const resolved = yield* Effect.option(dids.resolve(did))
    if (resolved._tag === "None") return yield* refuse(DidNoVerificationMethod.of(actionUuid))
    const keys = ed25519Keys(resolved.value.document)
    if (keys === "none") return yield* refuse(DidNoVerificationMethod.of(actionUuid))
    if (keys === "unsupported") return yield* refuse(DidUnsupportedKeyFormat.of(actionUuid))
    return keys
  })

  const request = Effect.fn("MutualSigning.request")(function* (principal: Principal, actionUuid: string, counterpartyDid: string) {
    const action = yield* actions.get(principal, actionUuid).pipe(Effect.catchTag("ActionsError", () => refuse(MutualSignNotFound.of(actionUuid))))
    if (action.agent_id === null) return yield* refuse(MutualSignNoAgent.of(actionUuid))
    const payload: MutualSignPayload = {
      action_uuid: action.action_uuid,
      org_uuid: action.org_uuid,
      agent_id: action.agent_id,
      action_type: action.action_type,
      action_details_hash: action.action_details_hash,
      instruction_hash: action.instruction_hash,
      model_id: action.model_id,
      created_at: action.created_at
    }
    const bytes = payloadBytes(payload)
    const signed = yield* dids.signAs(principal.orgUuid, action.agent_id, bytes)
    if (signed === "no_agent") return yield* refuse(MutualSignNoAgent.of(actionUuid))
    if (signed === "no_key") return yield* refuse(MutualSignNoDidKey.of(actionUuid))
    const requestedAt = yield* Clock.currentTimeMillis
    const row = yield* store.insert({
      actionUuid,
      orgUuid: principal.orgUuid,
      initiatorDid: signed.did,
      counterpartyDid,
      payload,
      payloadHash: sha256Tagged(bytes),
      initiatorSignature: signed.signature,
      requestedAt: new Date(requestedAt).toISOString(),
      expiresAt: new Date(requestedAt + config.mutualSignTtlMs).toISOString()
    })
    if (row === undefined) return yield* refuse(MutualSignAlreadyRequested.of(actionUuid))
    return {
      action_uuid: row.action_uuid,
      status: "pending" as const,
      counterparty_did: row.counterparty_did,
      payload_hash: row.payload_hash,
      initiator_signature: row.initiator_signature,
      expires_at: row.expires_at,
      requested_at: row.requested_at
    }
  })

  const pending = Effect.fn("MutualSigning.pending")(function* (actionUuid: string) {
    const row = yield* load(actionUuid)
    return {
      action_uuid: row.action_uuid,
      status: shownStatus(row, yield* Clock.currentTimeMillis),
      initiator_did: row.initiator_did,
      counterparty_did: row.counterparty_did,
      payload: row.payload,
      payload_hash: row.payload_hash,
      initiator_signature: row.initiator_signature,
      expires_at: row.expires_at,
      requested_at: row.requested_at
    }
  })

  /** Checked in the spec's order: pending, not expired, the requested DID, its key's signature, the payload hash. */
  const complete = Effect.fn("MutualSigning.complete")(function* (
    actionUuid: string,
    input: { readonly did: string; readonly signature: string; readonly signed_payload_hash: string }
  ) {
    const row = yield* load(actionUuid)
    if (row.status !== "pending") return yield* refuse(MutualSignNotPending.of(actionUuid))
    if (Date.parse(row.expires_at) <= (yield* Clock.currentTimeMillis)) return yield* refuse(MutualSignExpired.of(actionUuid))
    if (input.did !== row.counterparty_did) return yield* refuse(MutualSignDidMismatch.of(actionUuid))
    const keys = yield* counterpartyKeys(actionUuid, input.did)
    const bytes = payloadBytes(row.payload)
    if (!keys.some((key) => signatureValid(key, bytes, input.signature))) return yield* refuse(MutualSignInvalidSignature.of(actionUuid))
    if (input.signed_payload_hash !== row.payload_hash) return yield* refuse(MutualSignPayloadMismatch.of(actionUuid))
    const sealed = yield* store.complete(actionUuid, input.signature, combinedReceiptHash(row.payload, row.initiator_signature, input.signature))
    if (sealed === undefined) {
      // Completed, rejected or lapsed since it was read: answer as if it had been read now.
      const now = yield* load(actionUuid)
      return yield* refuse(now.status === "pending" ? MutualSignExpired.of(actionUuid) : MutualSignNotPending.of(actionUuid))
    }
    return { action_uuid: actionUuid, status: "completed" as const, combined_receipt_hash: sealed.combined_receipt_hash!, sealed_at: sealed.sealed_at! }
  })

  const receipt = Effect.fn("MutualSigning.receipt")(function* (actionUuid: string) {
    const row = yield* load(actionUuid)
    if (row.status !== "completed") return yield* refuse(MutualSignNotCompleted.of(actionUuid))
    return {
      action_uuid: row.action_uuid,
      status: row.status,
      initiator_did: row.initiator_did,
      counterparty_did: row.counterparty_did,
      payload: row.payload,
      payload_hash: row.payload_hash,
      initiator_signature: row.initiator_signature,
      counterparty_signature: row.counterparty_signature,
      counterparty_signed_at: row.counterparty_signed_at,
      combined_receipt_hash: row.combined_receipt_hash,
      sealed_at: row.sealed_at
    }
  })

  const reject = Effect.fn("MutualSigning.reject")(function* (actionUuid: string, reason: string) {
    yield* load(actionUuid)
    const rejected = yield* store.reject(actionUuid, reason)
    if (rejected === undefined) return yield* refuse(MutualSignNotPending.of(actionUuid))
    return { action_uuid: actionUuid, status: "rejected" as const, reason }
  })

  return MutualSigning.of({ request, pending, complete, receipt, reject })
})

export interface MutualSigningService {
  readonly request: (principal: Principal, actionUuid: string, counterpartyDid: string) => Effect.Effect<MutualSignRequested, MutualSignError>
  readonly pending: (actionUuid: string) => Effect.Effect<PendingMutualSign, MutualSignError>
  readonly complete: (
    actionUuid: string,
    input: { readonly did: string; readonly signature: string; readonly signed_payload_hash: string }
  ) => Effect.Effect<MutualSignCompleted, MutualSignError>
  readonly receipt: (actionUuid: string) => Effect.Effect<MutualSignReceipt, MutualSignError>
  readonly reject: (actionUuid: string, reason: string) => Effect.Effect<MutualSignRejected, MutualSignError>
}

export class MutualSigning extends Context.Service<MutualSigning, MutualSigningService>()("gateway/MutualSigning") {
  static readonly layer = Layer.effect(MutualSigning, makeMutualSigning)
}
