/**
 * What each credential type holds (spec 002): which fields are secret, which are required after
 * a merge, their defaults, and the non-secret `region` / `endpoint` shown in the status list.
 */
import { PROVIDER_TYPES, type ProviderSlug } from "../../protocol/provider-credentials.js"
import type { Issue } from "../platform/domain-error.js"

type Fields = Readonly<Record<string, string>>

interface TypeRules {
  readonly required: ReadonlyArray<string>
  readonly optional: ReadonlyArray<string>
  readonly defaults: Fields
  readonly https?: ReadonlyArray<string>
}

const RULES: Record<(typeof PROVIDER_TYPES)[ProviderSlug], TypeRules> = {
  api_key: { required: ["api_key"], optional: [], defaults: {} },
  cloud_a: { required: ["access_key_id", "secret_access_key"], optional: ["region"], defaults: { region: "us-east-1" } },
  cloud_b: { required: ["endpoint", "api_key"], optional: ["api_version"], defaults: { api_version: "2025-04-01-preview" }, https: ["endpoint"] },
  cloud_c: { required: ["project_id"], optional: ["region", "service_account_json"], defaults: { region: "us-central1" } }
}

/** Longest value accepted for any field (a service-account JSON is the largest). */
const MAX_FIELD_CHARS = 32_768

export const isProviderSlug = (value: string): value is ProviderSlug => Object.hasOwn(PROVIDER_TYPES, value)

/**
 * The stored fields merged with `update` (unknown fields ignored, defaults filled); the issues
 * when a field is not a non-empty string, too long, not HTTPS where it must be, or a required one
 * is missing after the merge.
 */
export const mergeCredentials = (slug: ProviderSlug, stored: Fields, update: Readonly<Record<string, unknown>>): { fields: Fields } | { issues: Array<Issue> } => {
  const rules = RULES[PROVIDER_TYPES[slug]]
  const issues: Array<Issue> = []
  const merged: Record<string, string> = { ...rules.defaults, ...stored }
  for (const name of [...rules.required, ...rules.optional]) {
    const value = update[name]
    if (value === undefined || value === null) continue
    if (typeof value !== "string" || value.trim() === "") issues.push({ path: `credentials.${name}`, message: "must be a non-empty string" })
    else if (value.length > MAX_FIELD_CHARS) issues.push({ path: `credentials.${name}`, message: `must be at most ${MAX_FIELD_CHARS} characters` })
    else merged[name] = value
  }
  for (const name of rules.https ?? []) {
    const value = merged[name]
    if (value !== undefined && !isHttpsUrl(value)) issues.push({ path: `credentials.${name}`, message: "must be an https:// URL" })
  }
  for (const name of rules.required) if (merged[name] === undefined) issues.push({ path: `credentials.${name}`, message: "is required" })
  return issues.length > 0 ? { issues } : { fields: merged }
}

const isHttpsUrl = (value: string) => {
  try {
    return new URL(value).protocol === "https:"
  } catch {
    return false
  }
}

/** The non-secret parts the status list shows. */
export const visibleParts = (slug: ProviderSlug, fields: Fields | undefined) => {
  const type = PROVIDER_TYPES[slug]
  return {
    region: type === "cloud_a" || type === "cloud_c" ? (fields?.region ?? null) : null,
    endpoint: type === "cloud_b" ? (fields?.endpoint ?? null) : null
  }
}
