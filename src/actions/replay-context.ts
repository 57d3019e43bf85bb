/**
 * Replay context (CONTRACT-sdk-beyond §1): four optional fields an SDK sends on authorize so an
 * external replay tool can confirm it has the inputs of the original run. They are kept in the
 * action's `sdk` column (only those sent) and their hash in `replay_context_hash`, computed here
 * once: every receipt of the action then carries that hash and is version `1.3`.
 *
 * Authorize is the hot path: without any of the four, `replayContextOf` is four property reads.
 */
import { sha256Tagged } from "../platform/digest.js"
import { canonicalJsonBytes } from "../receipts/signing.js"

export const REPLAY_KEYS = ["system_prompt_hash", "tool_inputs_hash", "model_params", "execution_env"] as const

type JsonObject = Readonly<Record<string, unknown>>

/** The four fields as the request has them (`null` = absent). */
export interface ReplayInput {
  readonly system_prompt_hash?: string | null
  readonly tool_inputs_hash?: string | null
  readonly model_params?: JsonObject | null
  readonly execution_env?: JsonObject | null
}

/** The four fields, each null when it was not sent: what the hash covers and the answers show. */
export interface ReplayFields {
  readonly system_prompt_hash: string | null
  readonly tool_inputs_hash: string | null
  readonly model_params: JsonObject | null
  readonly execution_env: JsonObject | null
}

/** `sha256:` + hex of the JCS bytes of the four fields, the way receipts canonicalize and hash. */
export const replayContextHash = (fields: ReplayFields): string => sha256Tagged(canonicalJsonBytes(fields))

/** What authorize stores: the fields sent (for `sdk`) and their hash; undefined when none was sent. */
export const replayContextOf = (input: ReplayInput): { readonly sdk: Record<string, unknown>; readonly hash: string } | undefined => {
  if (input.system_prompt_hash == null && input.tool_inputs_hash == null && input.model_params == null && input.execution_env == null) return undefined
  const fields = replayFieldsOf(input)
  const sdk: Record<string, unknown> = {}
  for (const key of REPLAY_KEYS) if (fields[key] !== null) sdk[key] = fields[key]
  return { sdk, hash: replayContextHash(fields) }
}

/** The four fields of an action from its stored `sdk` column (NULL for actions sent without them). */
export const replayFieldsOf = (sdk: ReplayInput | null): ReplayFields => ({
  system_prompt_hash: sdk?.system_prompt_hash ?? null,
  tool_inputs_hash: sdk?.tool_inputs_hash ?? null,
  model_params: sdk?.model_params ?? null,
  execution_env: sdk?.execution_env ?? null
})
