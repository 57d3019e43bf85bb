/**
 * Where a `/gateway/*` request goes (CONTRACT-sdk-beyond §6 "Routes"): the provider, the
 * upstream URL, and the action type the call is authorized as. Pure.
 */

export type Provider = "openai" | "anthropic"

export interface GatewayRoute {
  readonly provider: Provider
  /** The provider path after its `v1/` base, without query or trailing slash (`chat/completions`, `messages`). */
  readonly path: string
  /** The upstream URL, query included. */
  readonly upstreamUrl: string
  readonly actionType: string
}

export type RouteProblem =
  | { readonly _tag: "NotFound"; readonly provider: Provider }
  | { readonly _tag: "InvalidPath"; readonly provider: Provider }

export interface Upstreams {
  /** OPENAI_UPSTREAM_URL: the base the `{rest}` is appended to (`https://api.openai.com/v1`). */
  readonly openai: string
  /** ANTHROPIC_UPSTREAM_URL: the origin `/v1/{rest}` is appended to (`https://api.anthropic.com`). */
  readonly anthropic: string
}

const PREFIXES: ReadonlyArray<readonly [string, Provider]> = [
  ["/gateway/openai/v1", "openai"],
  ["/gateway/anthropic/v1", "anthropic"],
  // The README's `gatewayUrl: ".../gateway"` makes the SDK helpers build these.
  ["/gateway/gateway/openai/v1", "openai"],
  ["/gateway/gateway/anthropic/v1", "anthropic"]
]

const OPENAI_TYPES: ReadonlySet<string> = new Set([
  "chat/completions",
  "completions",
  "responses",
  "embeddings",
  "moderations",
  "images/generations",
  "images/edits",
  "images/variations",
  "audio/speech",
  "audio/transcriptions",
  "audio/translations"
])
const ANTHROPIC_TYPES: ReadonlySet<string> = new Set(["messages", "messages/count_tokens", "complete"])

/** `..`, an encoded `/` or `\`, or a `\` would let `{rest}` leave the provider's API base. */
const UNSAFE = /(^|\/)\.\.(\/|$)|%2e%2e|%2f|%5c|\\/i

const trimBase = (base: string): string => base.replace(/\/+$/, "")

export const actionTypeOf = (provider: Provider, method: string, path: string): string => {
  const known = provider === "openai" ? OPENAI_TYPES : ANTHROPIC_TYPES
  if (method === "POST" && known.has(path)) return `llm.${provider}.${path.replaceAll("/", ".")}`
  return `llm.${provider}.other`
}

/** The route of `url` (path only) and `query` (without `?`), or why there is none. */
export const routeOf = (method: string, url: string, query: string, upstreams: Upstreams): GatewayRoute | RouteProblem => {
  let provider: Provider | undefined
  let rest: string | undefined
  for (const [prefix, candidate] of PREFIXES) {
    if (url === prefix || url.startsWith(`${prefix}/`)) {
      provider = candidate
      rest = url.slice(prefix.length + 1)
      break
    }
  }
  if (provider === undefined || rest === undefined) return { _tag: "NotFound", provider: url.includes("/anthropic") ? "anthropic" : "openai" }
  // Only the path is checked: query strings pass unchanged.
  if (UNSAFE.test(rest)) return { _tag: "InvalidPath", provider }
  // The Anthropic SDKs append `/v1/messages` to the helper's base URL (which already ends in /v1).
  if (provider === "anthropic" && (rest === "v1" || rest.startsWith("v1/"))) rest = rest.slice(3)
  const path = rest.replace(/\/+$/, "")
  const base = provider === "openai" ? trimBase(upstreams.openai) : `${trimBase(upstreams.anthropic)}/v1`
  const search = query === "" ? "" : `?${query}`
  return {
    provider,
    path,
    upstreamUrl: rest === "" ? `${base}${search}` : `${base}/${rest}${search}`,
    actionType: actionTypeOf(provider, method, path)
  }
}

export const isRoute = (value: GatewayRoute | RouteProblem): value is GatewayRoute => !("_tag" in value)
