/** Validation of a custom model's fields (spec 002 limits; docs/decisions.md "Custom models"). */
import type { Issue } from "../platform/domain-error.js"
import { checkUrl, type OutboundPolicy } from "../platform/outbound/index.js"
import { DEFAULT_CONTENT_PATH } from "./custom-fetch.js"

export const DEFAULT_TIMEOUT_MS = 30_000
const MAX_AUTH_CHARS = 8_192
const MAX_SETTINGS_BYTES = 16_384
const CONTENT_PATH = /^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,15}$/
const MODEL_ID = /^[^\s]{1,100}$/

type Settings = Readonly<Record<string, unknown>>

export const checkName = (name: string, issues: Array<Issue>) => {
  const trimmed = name.trim()
  if (trimmed.length < 1 || trimmed.length > 200) issues.push({ path: "name", message: "must be 1-200 characters" })
  return trimmed
}

export const checkModelId = (modelId: string, issues: Array<Issue>) => {
  if (!MODEL_ID.test(modelId)) issues.push({ path: "model_id", message: "must be 1-100 characters without spaces" })
  return modelId
}

export const checkEndpoint = (url: string, policy: OutboundPolicy, issues: Array<Issue>) => {
  if (url.length > 2_000) issues.push({ path: "endpoint_url", message: "must be at most 2,000 characters" })
  else {
    try {
      checkUrl(url, policy)
    } catch (error) {
      issues.push({ path: "endpoint_url", message: error instanceof Error ? error.message : "not an allowed URL" })
    }
  }
  return url
}

export const checkTimeout = (timeout: number | null | undefined, issues: Array<Issue>) => {
  const value = timeout ?? DEFAULT_TIMEOUT_MS
  if (!Number.isInteger(value) || value < 1_000 || value > 120_000) issues.push({ path: "timeout_ms", message: "must be an integer from 1,000 to 120,000" })
  return value
}

/** undefined: no Authorization header. */
export const checkAuth = (auth: string | null | undefined, issues: Array<Issue>) => {
  if (auth === null || auth === undefined || auth.trim() === "") return undefined
  if (auth.length > MAX_AUTH_CHARS || /[\r\n]/.test(auth)) issues.push({ path: "auth_header", message: "must be one line of at most 8,192 characters" })
  return auth
}

const sizeOk = (value: unknown) => Buffer.byteLength(JSON.stringify(value)) <= MAX_SETTINGS_BYTES

export const checkRequestSchema = (value: Settings | null | undefined, issues: Array<Issue>): Settings => {
  const settings: Record<string, unknown> = { ...(value ?? {}), type: value?.type ?? "openai_compatible" }
  if (settings.type !== "openai_compatible") issues.push({ path: "request_schema.type", message: "only openai_compatible is supported" })
  if (settings.model !== undefined && (typeof settings.model !== "string" || settings.model.length > 200)) issues.push({ path: "request_schema.model", message: "must be a string of at most 200 characters" })
  if (settings.system_prompt !== undefined && typeof settings.system_prompt !== "string") issues.push({ path: "request_schema.system_prompt", message: "must be a string" })
  if (settings.guided_json !== undefined && typeof settings.guided_json !== "boolean") issues.push({ path: "request_schema.guided_json", message: "must be a boolean" })
  const extra = settings.extra_body
  if (extra !== undefined && (typeof extra !== "object" || extra === null || Array.isArray(extra))) issues.push({ path: "request_schema.extra_body", message: "must be an object" })
  if (!sizeOk(settings)) issues.push({ path: "request_schema", message: `must be at most ${MAX_SETTINGS_BYTES} bytes of JSON` })
  return settings
}

export const checkResponseSchema = (value: Settings | null | undefined, issues: Array<Issue>): Settings => {
  const settings: Record<string, unknown> = { ...(value ?? {}), type: value?.type ?? "openai_compatible", content_path: value?.content_path ?? DEFAULT_CONTENT_PATH }
  if (settings.type !== "openai_compatible") issues.push({ path: "response_schema.type", message: "only openai_compatible is supported" })
  if (typeof settings.content_path !== "string" || !CONTENT_PATH.test(settings.content_path)) issues.push({ path: "response_schema.content_path", message: "must be a dot path such as choices.0.message.content" })
  if (!sizeOk(settings)) issues.push({ path: "response_schema", message: `must be at most ${MAX_SETTINGS_BYTES} bytes of JSON` })
  return settings
}
