/**
 * Receipt verification in the browser with the portable verifier (protocol/verifier/). The server's
 * own verdict is never read: the checks run here on the signed payload, with the key from the JWKS.
 */
import { publicKeyId, rawPublicKey, verifyReceipt } from "../../protocol/verifier/index.ts"
import { getAction, getJwks, getReceipt, listActions } from "./api.ts"
import type { PublicJwk, StoredReceipt } from "./types.ts"

/** The downloaded file, and what the import box accepts. */
export interface ReceiptFile {
  readonly format: typeof RECEIPT_FILE_FORMAT
  readonly receipt_uuid: string
  readonly action_uuid: string
  readonly signed_payload: Record<string, unknown>
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly public_key: PublicJwk | null
  readonly timestamp_token: string | null
  /** The receipt before this one in the (organization, agent) chain, when it was found. */
  readonly previous: { readonly payload_hash: string; readonly signed_payload: Record<string, unknown> } | null
}

export const RECEIPT_FILE_FORMAT = "gateway-receipt/1"

export type Outcome = "passed" | "failed" | "not-applicable" | "not-checked"

export interface Check {
  readonly name: string
  readonly outcome: Outcome
  readonly detail: string
}

export interface Verdict {
  readonly checks: ReadonlyArray<Check>
  readonly overall: "valid" | "invalid" | "incomplete"
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value)

const firstError = (errors: ReadonlyArray<string>, check: string) => errors.find((error) => error.startsWith(`${check}:`))?.slice(check.length + 1).trim()

/** The four checks of one receipt file. `previousMissing` says why the chain link could not be checked. */
export const checkReceipt = (file: ReceiptFile, previousMissing = "the previous receipt was not found"): Verdict => {
  const sequence = file.signed_payload.agent_sequence
  const previousHash = file.signed_payload.previous_payload_hash ?? null
  const first = sequence === 1
  const result = verifyReceipt({
    signed_payload: file.signed_payload,
    payload_hash: file.payload_hash,
    signature: file.signature,
    // No key: the signature check fails, the others still run.
    public_key: file.public_key ?? new Uint8Array(0),
    previous: first ? null : file.previous,
    timestamp_token: file.timestamp_token
  })
  const { checks, errors } = result
  const signature: Check = checks.signature
    ? { name: "Signature", outcome: "passed", detail: `Ed25519 over the canonical payload, key ${file.public_key_id}.` }
    : {
        name: "Signature",
        outcome: "failed",
        detail: file.public_key === null ? `The gateway publishes no key with id ${file.public_key_id}.` : (firstError(errors, "signature") ?? "Does not verify.")
      }
  const hash: Check = checks.payload_hash
    ? { name: "Payload hash", outcome: "passed", detail: "sha256 of the canonical (RFC 8785) payload matches." }
    : { name: "Payload hash", outcome: "failed", detail: firstError(errors, "payload_hash") ?? "Does not match." }
  let chain: Check
  if (first)
    chain =
      previousHash === null
        ? { name: "Chain link", outcome: "not-applicable", detail: "First receipt of this agent's chain: there is no previous receipt." }
        : { name: "Chain link", outcome: "failed", detail: "The first receipt of a chain names a previous payload hash." }
  else if (checks.chain === undefined) chain = { name: "Chain link", outcome: "not-checked", detail: `Not checked: ${previousMissing}.` }
  else
    chain = checks.chain
      ? { name: "Chain link", outcome: "passed", detail: `Follows receipt #${String(Number(sequence) - 1)} (${String(previousHash)}).` }
      : { name: "Chain link", outcome: "failed", detail: firstError(errors, "chain") ?? "Does not link." }
  const timestamp: Check =
    checks.timestamp_imprint === undefined
      ? { name: "Timestamp", outcome: "not-applicable", detail: "The receipt carries no RFC 3161 timestamp token." }
      : checks.timestamp_imprint
        ? { name: "Timestamp", outcome: "passed", detail: "The RFC 3161 token's message imprint is sha256 of the signed payload." }
        : { name: "Timestamp", outcome: "failed", detail: firstError(errors, "timestamp_imprint") ?? "The imprint differs." }
  const all = [signature, hash, chain, timestamp]
  const overall = all.some((check) => check.outcome === "failed") ? "invalid" : all.some((check) => check.outcome === "not-checked") ? "incomplete" : "valid"
  return { checks: all, overall }
}

/** Reads a pasted receipt file; throws a message for the user when it is not one. */
export const parseReceiptFile = (text: string): ReceiptFile => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new Error("This is not valid JSON.")
  }
  if (!isObject(value)) throw new Error("A receipt file is a JSON object.")
  const text_ = (key: string) => {
    const field = value[key]
    if (typeof field !== "string") throw new Error(`The field ${key} is missing or not a string.`)
    return field
  }
  if (!isObject(value.signed_payload)) throw new Error("The field signed_payload is missing or not an object.")
  const key = value.public_key
  if (!isObject(key)) throw new Error("The field public_key is missing: it must be the Ed25519 JWK that signed the receipt.")
  const previous = value.previous
  if (previous != null && !(isObject(previous) && typeof previous.payload_hash === "string" && isObject(previous.signed_payload)))
    throw new Error("The field previous must be null or hold payload_hash and signed_payload.")
  const token = value.timestamp_token
  if (token != null && typeof token !== "string") throw new Error("The field timestamp_token must be null or a base64 string.")
  return {
    format: RECEIPT_FILE_FORMAT,
    receipt_uuid: typeof value.receipt_uuid === "string" ? value.receipt_uuid : "",
    action_uuid: typeof value.action_uuid === "string" ? value.action_uuid : "",
    signed_payload: value.signed_payload,
    payload_hash: text_("payload_hash"),
    signature: text_("signature"),
    public_key_id: typeof value.public_key_id === "string" ? value.public_key_id : "",
    public_key: key as unknown as PublicJwk,
    timestamp_token: token ?? null,
    previous: previous == null ? null : (previous as ReceiptFile["previous"])
  }
}

/** The id the gateway derives from a key, or undefined when the JWK is not an Ed25519 key. */
export const keyIdOf = (key: PublicJwk): string | undefined => {
  try {
    return publicKeyId(rawPublicKey(key))
  } catch {
    return undefined
  }
}

export const findKey = async (keyId: string): Promise<PublicJwk | null> => (await getJwks()).keys.find((key) => key.kid === keyId) ?? null

const toFile = (receipt: StoredReceipt, key: PublicJwk | null, previous: ReceiptFile["previous"]): ReceiptFile => ({
  format: RECEIPT_FILE_FORMAT,
  receipt_uuid: receipt.receipt_uuid,
  action_uuid: receipt.action_uuid,
  signed_payload: receipt.signed_payload,
  payload_hash: receipt.payload_hash,
  signature: receipt.signature,
  public_key_id: receipt.public_key_id,
  public_key: key,
  timestamp_token: receipt.timestamp_token,
  previous
})

/** How many of the agent's latest actions are searched for the previous receipt. */
const SEARCH_LIMIT = 100

/**
 * The previous receipt of the chain. No route looks a receipt up by sequence, so the agent's latest
 * actions are read (newest first, a few at a time) until one carries sequence n − 1.
 */
const findPrevious = async (token: string, receipt: StoredReceipt, sequence: number): Promise<ReceiptFile["previous"] | string> => {
  if (receipt.agent_id === null) return "actions without an agent id cannot be listed by agent"
  const list = await listActions(token, { agent_id: receipt.agent_id }, 1, SEARCH_LIMIT)
  const candidates = list.data.filter((item) => item.action_uuid !== receipt.action_uuid)
  for (let start = 0; start < candidates.length; start += 10) {
    const details = await Promise.all(candidates.slice(start, start + 10).map((item) => getAction(token, item.action_uuid).catch(() => undefined)))
    const match = details.find((detail) => detail?.agent_sequence === sequence - 1 && detail.receipt !== null)
    if (match?.receipt) {
      const previous = await getReceipt(token, match.receipt.receipt_uuid)
      return { payload_hash: previous.payload_hash, signed_payload: previous.signed_payload }
    }
  }
  return `receipt #${sequence - 1} is not among the agent's latest ${SEARCH_LIMIT} actions`
}

/** Everything needed to verify an action's receipt: the stored receipt, its key from the JWKS, its predecessor. */
export const loadReceiptFile = async (token: string, receiptUuid: string): Promise<{ file: ReceiptFile; previousMissing: string }> => {
  const receipt = await getReceipt(token, receiptUuid)
  const key = await findKey(receipt.public_key_id)
  const sequence = receipt.signed_payload.agent_sequence
  let previous: ReceiptFile["previous"] = null
  let previousMissing = "the previous receipt was not found"
  if (typeof sequence === "number" && sequence > 1) {
    const found = await findPrevious(token, receipt, sequence)
    if (typeof found === "string") previousMissing = found
    else previous = found
  }
  return { file: toFile(receipt, key, previous), previousMissing }
}
