/**
 * The platform area's calls (spec part 002): the model catalogue and preferences, custom models,
 * provider credentials, feature flags (the organization's and the platform administrators'),
 * single sign-on and sanitize. Field names are the gateway's (protocol/*.ts).
 */

import type { PullRequestViolations } from "../../../../protocol/code-review.ts"
import type { FeatureFlag as FeatureFlagSchema } from "../../../../protocol/flags.ts"
import type { CatalogueEntry as CatalogueEntrySchema, CustomModel as CustomModelSchema, CustomModelTest as CustomModelTestSchema } from "../../../../protocol/models.ts"
import type { ProviderStatus as ProviderStatusSchema } from "../../../../protocol/provider-credentials.ts"
import type { SanitizeFinding as SanitizeFindingSchema, SanitizeTestResult as SanitizeTestResultSchema } from "../../../../protocol/sanitize.ts"
import type { SanitizedFile as SanitizedFileSchema } from "../../../../protocol/sanitize-files.ts"
import type { SsoConfiguration as SsoConfigurationSchema } from "../../../../protocol/sso.ts"
import { ApiError, request, sessionRejected } from "../../api.ts"
import type { ErrorBody } from "../../types.ts"

export type CatalogueEntry = typeof CatalogueEntrySchema.Type
export type CustomModel = typeof CustomModelSchema.Type
export type CustomModelTest = typeof CustomModelTestSchema.Type
export type ProviderStatus = typeof ProviderStatusSchema.Type
export type FeatureFlag = typeof FeatureFlagSchema.Type
export type SsoConfiguration = typeof SsoConfigurationSchema.Type
/** A finding of a text or a file (a file's `library` is any scanner name). */
export type SanitizeFinding = Omit<typeof SanitizeFindingSchema.Type, "library"> & { readonly library: string }
export type SanitizeResult = typeof SanitizeTestResultSchema.Type & { readonly receipt?: { readonly receipt_uuid: string } }
export type SanitizedFile = typeof SanitizedFileSchema.Type

const id = encodeURIComponent

/* Catalogue and preferences. */

export const catalogue = (token: string, includeDisabled: boolean) =>
  request<ReadonlyArray<CatalogueEntry>>("GET", `/api/v1/models${includeDisabled ? "?include_disabled=true" : ""}`, token)

/** The features whose disabled models are a plain list (the route of each). */
export const DISABLED_LISTS = {
  cases: { label: "Cases", path: "/api/v1/models/preferences" },
  policy: { label: "Policy evaluation", path: "/api/v1/models/policy-preferences" },
  sanitize: { label: "Sanitize (AI second pass)", path: "/api/v1/models/sanitize-preferences" }
} as const
export type DisabledFeature = keyof typeof DISABLED_LISTS

export const getDisabled = (token: string, feature: DisabledFeature) => request<{ disabled_models: ReadonlyArray<string> }>("GET", DISABLED_LISTS[feature].path, token)
export const putDisabled = (token: string, feature: DisabledFeature, disabled: ReadonlyArray<string>) =>
  request<{ disabled_models: ReadonlyArray<string> }>("PUT", DISABLED_LISTS[feature].path, token, { disabled_models: disabled })

export const getChatDefault = (token: string) => request<{ chat_default_model: string | null }>("GET", "/api/v1/models/chat-default", token)
export const putChatDefault = (token: string, model: string) => request<{ chat_default_model: string | null }>("PUT", "/api/v1/models/chat-default", token, { chat_default_model: model })
export const getChatAllowed = (token: string) => request<{ chat_allowed_models: ReadonlyArray<string> | null }>("GET", "/api/v1/models/chat-allowed", token)
/** null = every enabled model may chat. */
export const putChatAllowed = (token: string, models: ReadonlyArray<string> | null) =>
  request<{ chat_allowed_models: ReadonlyArray<string> | null }>("PUT", "/api/v1/models/chat-allowed", token, { chat_allowed_models: models })

export interface CodeReview {
  readonly default_model: string | null
  readonly disabled_models: ReadonlyArray<string>
}
export const getCodeReview = (token: string) => request<CodeReview>("GET", "/api/v1/models/code-review-preferences", token)
export const putCodeReview = (token: string, value: CodeReview) => request<CodeReview>("PUT", "/api/v1/models/code-review-preferences", token, value)

/* Custom models. */

export interface NewCustomModel {
  readonly name: string
  readonly model_id: string
  readonly endpoint_url: string
  readonly auth_header?: string | null
  readonly timeout_ms?: number
  /** Where the answer text sits in the endpoint's reply (`content_path`, default choices.0.message.content). */
  readonly response_schema?: { readonly content_path: string }
}
export type CustomModelPatch = Partial<Omit<NewCustomModel, "model_id">>

export const listCustomModels = (token: string) => request<{ data: ReadonlyArray<CustomModel> }>("GET", "/api/v1/models/custom", token)
export const getCustomModel = (token: string, modelId: string) => request<CustomModel>("GET", `/api/v1/models/custom/${id(modelId)}`, token)
export const createCustomModel = (token: string, body: NewCustomModel) => request<CustomModel>("POST", "/api/v1/models/custom", token, body)
export const updateCustomModel = (token: string, modelId: string, body: CustomModelPatch) => request<CustomModel>("PUT", `/api/v1/models/custom/${id(modelId)}`, token, body)
export const deleteCustomModel = (token: string, modelId: string) => request<unknown>("DELETE", `/api/v1/models/custom/${id(modelId)}`, token)
export const testCustomModel = (token: string, modelId: string) => request<CustomModelTest>("POST", `/api/v1/models/custom/${id(modelId)}/test`, token)

/* Provider credentials. */

export const listProviders = (token: string) => request<{ providers: ReadonlyArray<ProviderStatus> }>("GET", "/api/v1/provider-credentials", token)
export const saveProvider = (token: string, provider: string, credentials: Readonly<Record<string, string>>) =>
  request<{ message: string }>("POST", "/api/v1/provider-credentials", token, { provider, credentials })
export const deleteProvider = (token: string, provider: string) => request<{ message: string }>("DELETE", `/api/v1/provider-credentials?provider=${id(provider)}`, token)

/* Feature flags. */

export const resolvedFlags = (token: string) => request<{ flags: Readonly<Record<string, boolean>> }>("GET", "/api/v1/feature-flags", token)
export const toggleFlag = (token: string, key: string, enabled: boolean) => request<{ key: string; enabled: boolean }>("PUT", `/api/v1/feature-flags/${id(key)}`, token, { enabled })

/**
 * A platform administration call: the X-Admin-Key header instead of the session (the key is the
 * platform operator's, typed in by the user for this page only). A 401 here says the key was
 * refused; it must not end the user's session.
 */
const adminCall = async <T>(method: string, path: string, adminKey: string, body?: unknown): Promise<T> => {
  const headers: Record<string, string> = { accept: "application/json", "x-admin-key": adminKey }
  if (body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit" })
  } catch {
    throw new ApiError(0, "NETWORK", "The gateway could not be reached. Check your connection and try again.")
  }
  const parsed = (await response.json().catch(() => ({}))) as T & ErrorBody
  if (response.ok) return parsed
  if (response.status === 401) throw new ApiError(403, "ADMIN_KEY_REFUSED", "the administration key was refused")
  throw new ApiError(response.status, parsed.code ?? "ERROR", parsed.message ?? `Request failed (${response.status})`)
}

const ADMIN_FLAGS = "/api/v1/admin/feature-flags"

export interface FlagChanges {
  readonly description?: string | null
  readonly enabled_global?: boolean
  readonly rollout_percentage?: number
  readonly enabled_org_ids?: ReadonlyArray<string>
}

export const adminFlags = (adminKey: string) => adminCall<ReadonlyArray<FeatureFlag>>("GET", ADMIN_FLAGS, adminKey)
export const adminCreateFlag = (adminKey: string, body: FlagChanges & { readonly key: string }) => adminCall<FeatureFlag>("POST", ADMIN_FLAGS, adminKey, body)
export const adminUpdateFlag = (adminKey: string, key: string, body: FlagChanges) => adminCall<FeatureFlag>("PUT", `${ADMIN_FLAGS}/${id(key)}`, adminKey, body)
export const adminDeleteFlag = (adminKey: string, key: string) => adminCall<unknown>("DELETE", `${ADMIN_FLAGS}/${id(key)}`, adminKey)

/* Single sign-on. */

export const getSso = (token: string) => request<SsoConfiguration>("GET", "/api/v1/sso", token)
export const configureSaml = (token: string, body: { idp_metadata_xml: string; domains?: ReadonlyArray<string> }) =>
  request<SsoConfiguration>("POST", "/api/v1/sso/configure", token, body)
export const configureOidc = (token: string, body: { client_id: string; client_secret: string; issuer_url: string; domains?: ReadonlyArray<string> }) =>
  request<SsoConfiguration>("POST", "/api/v1/sso/configure-oidc", token, body)
export const enforceSso = (token: string, enforce: boolean) => request<{ message: string }>("POST", "/api/v1/sso/enforce", token, { enforce })
export const deleteSso = (token: string) => request<unknown>("DELETE", "/api/v1/sso", token)

/* Sanitize. */

export const SANITIZE_POLICIES = ["default", "hipaa", "pci", "legal"] as const
export const SANITIZE_MODES = ["redact", "tokenize", "block", "flag"] as const
export type SanitizePolicy = (typeof SANITIZE_POLICIES)[number]
export type SanitizeMode = (typeof SANITIZE_MODES)[number]

/** Longest text `POST /api/v1/sanitize` takes (protocol/sanitize.ts MAX_SANITIZE_CHARS). */
export const MAX_SANITIZE_CHARS = 500_000
/** The whole upload body the gateway accepts (MAX_MULTIPART_BYTES default: 50 MB). */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024
/** What the form's other parts and headers take of it, kept free so a file just under the cap is not refused. */
export const UPLOAD_OVERHEAD_BYTES = 16 * 1024

export interface SanitizeOptions {
  readonly content: string
  readonly policy: SanitizePolicy
  readonly mode: SanitizeMode
}

/** The dry run (records nothing) or the recorded run (audit log and a signed receipt). */
export const sanitizeText = (token: string, options: SanitizeOptions, record: boolean) =>
  request<SanitizeResult>("POST", record ? "/api/v1/sanitize" : "/api/v1/sanitize/test", token, options)

/** A file upload (multipart) with the session's token; the gateway reads the type from the leading bytes. */
export const sanitizeFile = async (token: string, file: File, options: { policy: SanitizePolicy; mode: SanitizeMode; pixels: boolean }): Promise<SanitizedFile> => {
  const form = new FormData()
  form.append("policy", options.policy)
  form.append("mode", options.mode)
  form.append("include_pixel_redaction", options.pixels ? "true" : "false")
  form.append("file", file, file.name)
  let response: Response
  try {
    response = await fetch("/api/v1/sanitize/file", { method: "POST", headers: { accept: "application/json", authorization: `Bearer ${token}` }, body: form, credentials: "omit" })
  } catch {
    throw new ApiError(0, "NETWORK", "The gateway could not be reached (or refused the upload). Check your connection and try again.")
  }
  const parsed = (await response.json().catch(() => ({}))) as SanitizedFile & ErrorBody
  if (response.ok) return parsed
  if (response.status === 401) sessionRejected()
  if (response.status === 413) throw new ApiError(413, "PAYLOAD_TOO_LARGE", "The file is larger than the gateway's 50 MB limit.")
  throw new ApiError(response.status, parsed.code ?? "ERROR", parsed.message ?? `Request failed (${response.status})`)
}

/** The cleaned file, fetched once (the token is single use and is the only credential). */
export const downloadSanitized = async (downloadToken: string): Promise<{ blob: Blob; filename: string | undefined }> => {
  let response: Response
  try {
    response = await fetch(`/api/v1/sanitize/file/${id(downloadToken)}/download`, { credentials: "omit" })
  } catch {
    throw new ApiError(0, "NETWORK", "The gateway could not be reached. Check your connection and try again.")
  }
  if (!response.ok) {
    const parsed = (await response.json().catch(() => ({}))) as ErrorBody
    throw new ApiError(response.status, parsed.code ?? "ERROR", parsed.message ?? `Download failed (${response.status})`)
  }
  const disposition = response.headers.get("content-disposition") ?? ""
  const filename = /filename="([^"]+)"/.exec(disposition)?.[1]
  return { blob: await response.blob(), filename }
}

/* Code review. */

export type { PullRequestViolations }

/** The latest review's violations of a pull request in the caller's organization (one page). */
export const pullRequestViolations = (token: string, owner: string, repo: string, pullNumber: number, page: number, perPage: number) =>
  request<PullRequestViolations>("GET", `/api/v1/webhooks/github/violations/${id(owner)}/${id(repo)}/${pullNumber}?page=${page}&per_page=${perPage}`, token)
