/**
 * Idempotency of authorize (CONTRACT.md): keyed by (org, idempotency_key) for
 * 24 h. The request digest covers every field but the key itself, in canonical
 * (RFC 8785) form, so field order and whitespace do not make a "different body".
 */
import { canonicalJson, textHash } from "../../protocol/verifier/index.js"
import type { Reason } from "../platform/domain-error.js"
import { REPLAY_KEYS } from "./replay-context.js"

export const IDEMPOTENCY_RETENTION_MS = 24 * 3600 * 1000

/** Fields whose `null` means absent (the replay context): `{k: null}` and `{}` are the same body. */
const NULL_IS_ABSENT: ReadonlySet<string> = new Set(REPLAY_KEYS)

export const requestDigest = (payload: Record<string, unknown>): string => {
  const { idempotency_key: _key, ...rest } = payload
  // undefined values are not JSON; drop them so `{a: undefined}` equals `{}`.
  const defined = Object.fromEntries(
    Object.entries(rest).filter(([key, value]) => value !== undefined && !(value === null && NULL_IS_ABSENT.has(key)))
  )
  return textHash(canonicalJson(defined))
}

/** What a stored answer replays: the status code and the body (without request_id). */
export interface StoredAnswer {
  readonly status: number
  readonly body: Record<string, unknown>
}

/** A refusal as stored for replay: the body the API answered, without request_id. */
export const refusalBody = (reason: Reason): Record<string, unknown> => ({ code: reason.code, message: reason.message, details: reason.details ?? {} })
