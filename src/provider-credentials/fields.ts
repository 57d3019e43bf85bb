/**
 * What each credential type holds (spec 002): which fields are secret, which are required after
 * a merge, their defaults, the exact shape of each field, and the non-secret `region` /
 * `endpoint` shown in the status list. Shapes are strict because fields become parts of the
 * provider's host name or URL (regions, project ids), HTTP headers (keys) or a Google credential:
 * a value that could steer a call elsewhere is refused when saved and again before each call.
 */
import { PROVIDER_TYPES, type ProviderSlug } from "../../protocol/provider-credentials.js"
import type { Issue } from "../platform/domain-error.js"
import { parseServiceAccount } from "./service-account.js"

type Fields = Readonly<Record<string, string>>

/** Why a value is not acceptable for its field, or undefined. */
type FieldCheck = (value: string) => string | undefined

const matching =
  (pattern: RegExp, problem: string): FieldCheck =>
  (value) =>
    pattern.test(value) ? undefined : problem

/** Keys and secrets go into HTTP headers and signatures: printable ASCII, no spaces. */
const secret = matching(/^[\x21-\x7e]{1,4096}$/, "must be printable ASCII without spaces (at most 4,096 characters)")

const httpsUrl: FieldCheck = (value) => {
  try {
    return value.length <= 2_000 && new URL(value).protocol === "https:" ? undefined : "must be an https:// URL"
  } catch {
    return "must be an https:// URL"
  }
}

const serviceAccount: FieldCheck = (value) => {
  const parsed = parseServiceAccount(value)
  return "problem" in parsed ? parsed.problem : undefined
}

interface TypeRules {
  readonly required: ReadonlyArray<string>
  readonly optional: ReadonlyArray<string>
  readonly defaults: Fields
  readonly checks: Readonly<Record<string, FieldCheck>>
  /** Fields holding a URL the gateway will call: checked against the outbound address rules when saved. */
  readonly destinations?: ReadonlyArray<string>
}

const RULES: Record<(typeof PROVIDER_TYPES)[ProviderSlug], TypeRules> = {
  api_key: { required: ["api_key"], optional: [], defaults: {}, checks: { api_key: secret } },
  cloud_a: {
    required: ["access_key_id", "secret_access_key"],
    optional: ["region"],
    defaults: { region: "us-east-1" },
    checks: { access_key_id: secret, secret_access_key: secret, region: matching(/^[a-z]{2}(-[a-z]{2,12}){1,3}-\d{1,2}$/, "must be an AWS region name such as us-east-1") }
  },
  cloud_b: {
    required: ["endpoint", "api_key"],
    optional: ["api_version"],
    defaults: { api_version: "2025-04-01-preview" },
    checks: { endpoint: httpsUrl, api_key: secret, api_version: matching(/^[A-Za-z0-9._-]{1,40}$/, "must be an API version such as 2025-04-01-preview") },
    destinations: ["endpoint"]
  },
  cloud_c: {
    required: ["project_id"],
    optional: ["region", "service_account_json"],
    defaults: { region: "us-central1" },
    checks: {
      project_id: matching(/^([a-z0-9.-]{1,63}:)?[a-z][a-z0-9-]{4,61}[a-z0-9]$/, "must be a Google Cloud project id such as my-project-123"),
      region: matching(/^[a-z]{2,20}(-[a-z]{2,20}\d{0,2})?$/, "must be a Google Cloud location such as us-central1 or global"),
      service_account_json: serviceAccount
    }
  }
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
    else {
      const problem = rules.checks[name]?.(value)
      if (problem === undefined) merged[name] = value
      else issues.push({ path: `credentials.${name}`, message: problem })
    }
  }
  for (const name of rules.required) if (merged[name] === undefined) issues.push({ path: `credentials.${name}`, message: "is required" })
  return issues.length > 0 ? { issues } : { fields: merged }
}

/**
 * Stored fields checked again before a call (rows saved before these rules, or written by other
 * means, get no trust): undefined when callable, else why not.
 */
export const storedFieldsProblem = (slug: ProviderSlug, fields: Fields): string | undefined => {
  const rules = RULES[PROVIDER_TYPES[slug]]
  for (const name of rules.required) if (typeof fields[name] !== "string") return `credentials.${name} is missing`
  for (const [name, check] of Object.entries(rules.checks)) {
    const value = fields[name]
    if (value === undefined) continue
    const problem = typeof value === "string" ? check(value) : "must be a string"
    if (problem !== undefined) return `credentials.${name} ${problem}`
  }
  return undefined
}

/** The saved fields that name a URL the gateway will call (checked against the outbound rules). */
export const destinationsOf = (slug: ProviderSlug, update: Readonly<Record<string, unknown>>): Array<{ path: string; url: string }> =>
  (RULES[PROVIDER_TYPES[slug]].destinations ?? []).flatMap((name) => {
    const value = update[name]
    return typeof value === "string" && httpsUrl(value) === undefined ? [{ path: `credentials.${name}`, url: value }] : []
  })

/** The non-secret parts the status list shows. */
export const visibleParts = (slug: ProviderSlug, fields: Fields | undefined) => {
  const type = PROVIDER_TYPES[slug]
  return {
    region: type === "cloud_a" || type === "cloud_c" ? (fields?.region ?? null) : null,
    endpoint: type === "cloud_b" ? (fields?.endpoint ?? null) : null
  }
}
