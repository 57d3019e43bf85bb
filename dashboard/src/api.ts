/** Calls to the public API with the session's JWT; a 401 ends the session (the app sends the user to sign-in). */
import type { ReceiptExport } from "../../protocol/receipts.ts"
import type { ActionDetail, ActionList, ApprovalResult, ApprovalReview, ErrorBody, Explanation, Jwks, LoginResponse, PendingNotifications, StoredReceipt } from "./types.ts"

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string
  ) {
    super(message)
  }
}

let onUnauthorized: () => void = () => {}
export const setUnauthorizedHandler = (handler: () => void) => {
  onUnauthorized = handler
}

export const request = async <T>(method: string, path: string, token: string | undefined, body?: unknown): Promise<T> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  if (body !== undefined) headers["content-type"] = "application/json"
  const response = await send(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit" })
  const parsed = (await response.json().catch(() => ({}))) as T & ErrorBody
  if (response.ok) return parsed
  throw failure(response, parsed, token)
}

const send = async (path: string, init: RequestInit): Promise<Response> => {
  try {
    return await fetch(path, init)
  } catch {
    throw new ApiError(0, "NETWORK", "The gateway could not be reached. Check your connection and try again.")
  }
}

/** The error of a refused call (its JSON body's code and message); a 401 with a session ends it. */
const failure = (response: Response, parsed: ErrorBody, token: string | undefined): ApiError => {
  if (response.status === 401 && token !== undefined) onUnauthorized()
  return new ApiError(response.status, parsed.code ?? "ERROR", parsed.message ?? `Request failed (${response.status})`)
}

const id = encodeURIComponent

export const login = (email: string, password: string) => request<LoginResponse>("POST", "/api/v1/auth/login", undefined, { email, password })

/** Single sign-on: the one-time code the identity provider's redirect carried, spent for a JWT. */
export const exchangeSsoCode = (code: string) =>
  request<{ token: string; expires_in: number; org_uuid: string; user_uuid: string }>("POST", "/api/v1/auth/sso/exchange", undefined, { code })

/** Who a JWT belongs to (its e-mail and role, which the exchange does not answer). */
export const whoami = (token: string) => request<{ email: string; role: LoginResponse["role"]; org_uuid: string }>("GET", "/api/v1/auth/whoami", token)

export const pendingNotifications = (token: string) => request<PendingNotifications>("GET", "/api/v1/notifications/pending", token)

export const getAction = (token: string, actionUuid: string) => request<ActionDetail>("GET", `/api/v1/actions/${id(actionUuid)}`, token)

/** The action as its approvers read it, stored details included (JWT; 403 for others). */
export const reviewAction = (token: string, actionUuid: string) => request<ApprovalReview>("GET", `/api/v1/actions/${id(actionUuid)}/dashboard-review`, token)

export const approve = (token: string, actionUuid: string) => request<ApprovalResult>("POST", `/api/v1/actions/${id(actionUuid)}/dashboard-approve`, token)

export const deny = (token: string, actionUuid: string, reason: string) =>
  request<ApprovalResult>("POST", `/api/v1/actions/${id(actionUuid)}/dashboard-deny${reason === "" ? "" : `?reason=${id(reason)}`}`, token)

export interface ActionFilters {
  readonly status?: string
  readonly agent_id?: string
  readonly action_type?: string
}

export const listActions = (token: string, filters: ActionFilters, page: number, perPage: number) => {
  const query = new URLSearchParams({ page: String(page), per_page: String(perPage) })
  for (const [key, value] of Object.entries(filters)) if (value !== undefined && value !== "") query.set(key, value)
  return request<ActionList>("GET", `/api/v1/actions?${query}`, token)
}

export const getReceipt = (token: string, receiptUuid: string) => request<StoredReceipt>("GET", `/api/v1/receipts/${id(receiptUuid)}`, token)

/** The receipt exported for offline verification (the "Download receipt" file). */
export const exportReceipt = (token: string, receiptUuid: string) =>
  request<ReceiptExport & { readonly request_id?: string }>("GET", `/api/v1/receipts/${id(receiptUuid)}/export?format=json`, token)

export const getExplanation = (token: string, actionUuid: string) => request<Explanation>("GET", `/api/v1/actions/${id(actionUuid)}/explanation`, token)

/** A file the gateway answers (a PDF), fetched with the session's token: the browser cannot send it on a plain link. */
export const downloadBytes = async (token: string, path: string): Promise<Blob> => {
  const response = await send(path, { headers: { authorization: `Bearer ${token}` }, credentials: "omit" })
  if (response.ok) return response.blob()
  throw failure(response, (await response.json().catch(() => ({}))) as ErrorBody, token)
}

export const explanationPdfPath = (actionUuid: string) => `/api/v1/actions/${id(actionUuid)}/explanation/pdf`

export const getJwks = () => request<Jwks>("GET", "/api/v1/.well-known/jwks.json", undefined)
/** For calls made outside `request` (the case stream): a 401 ends the session the same way. */
export const sessionRejected = () => onUnauthorized()
