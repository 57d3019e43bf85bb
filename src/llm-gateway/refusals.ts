/**
 * Answers the gateway gives itself, in the provider's own error format (CONTRACT-sdk-beyond §6
 * "Denials"), so the provider SDK in the agent raises its usual error with our details in `aira`.
 */
import type { Provider } from "./paths.js"

export type RefusalCode =
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "POLICY_DENIED"
  | "ENDPOINT_NOT_WHITELISTED"
  | "ENDPOINT_TLS_MISMATCH"
  | "APPROVAL_REQUIRED"
  | "ACTION_MISMATCH"
  | "AGENT_DECOMMISSIONED"
  | "INVALID_PATH"
  | "NOT_FOUND"
  | "PAYLOAD_TOO_LARGE"
  | "RATE_LIMIT_EXCEEDED"
  | "UPSTREAM_UNAVAILABLE"
  | "UPSTREAM_TIMEOUT"
  | "VALIDATION_ERROR"
  | "REQUEST_TIMEOUT"
  | "SERVICE_UNAVAILABLE"

const STATUS: Record<RefusalCode, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  POLICY_DENIED: 403,
  ENDPOINT_NOT_WHITELISTED: 403,
  ENDPOINT_TLS_MISMATCH: 403,
  APPROVAL_REQUIRED: 403,
  ACTION_MISMATCH: 409,
  AGENT_DECOMMISSIONED: 422,
  VALIDATION_ERROR: 422,
  INVALID_PATH: 400,
  NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMIT_EXCEEDED: 429,
  UPSTREAM_UNAVAILABLE: 502,
  SERVICE_UNAVAILABLE: 503,
  UPSTREAM_TIMEOUT: 504
}

/** Anthropic's error vocabulary, used by both formats. */
const typeOf = (status: number): string => {
  switch (status) {
    case 401:
      return "authentication_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 413:
      return "request_too_large"
    case 429:
      return "rate_limit_error"
    case 502:
    case 503:
    case 504:
      return "api_error"
    default:
      return "invalid_request_error"
  }
}

export interface Refusal {
  readonly code: RefusalCode
  readonly message: string
  readonly actionUuid?: string | null
  readonly policyUuid?: string | null
  readonly receiptUuid?: string | null
  /** Seconds, for 429. */
  readonly retryAfter?: number
}

export const statusOf = (code: RefusalCode): number => STATUS[code]

/** The refusal's body in `provider`'s format. */
export const refusalBody = (provider: Provider, refusal: Refusal, requestId: string): string => {
  const status = STATUS[refusal.code]
  const aira = {
    code: refusal.code,
    action_uuid: refusal.actionUuid ?? null,
    policy_uuid: refusal.policyUuid ?? null,
    receipt_uuid: refusal.receiptUuid ?? null,
    request_id: requestId
  }
  const type = typeOf(status)
  return JSON.stringify(
    provider === "openai"
      ? { error: { message: refusal.message, type, param: null, code: refusal.code, aira } }
      : { type: "error", error: { type, message: refusal.message, aira } }
  )
}
