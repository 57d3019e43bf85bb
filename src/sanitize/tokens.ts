/**
 * Credentials that scan's recognizers do not name: tokens whose vendor prefix says what they are
 * (npm, Stripe webhooks, Shopify, Vault, SendGrid, Slack webhooks…), and any value assigned to a
 * key whose name says it is secret (`SHOPIFY_API_SECRET=…`, `"signingSecret": "…"`,
 * `datadog_api_key = "…"`, `sid=…` in a log line), in every naming style (snake, kebab, camel,
 * dotted). A name is split into its words; the last word (or the last two) must name a secret, and
 * the names of things that only sound secret (`public_key`, `max_tokens`, `token_url`) are left.
 */
import { type Detector, type Emit, MAX_HITS_PER_DETECTOR, type RegexRule, regexDetector } from "./detector.js"
import { entropy } from "./validators.js"

/** Vendor prefixes with the length and alphabet of what follows them. */
const PREFIXED = [
  "npm_[A-Za-z0-9]{36}",
  "whsec_[A-Za-z0-9+/=]{24,64}",
  "shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
  "hv[sb]\\.[A-Za-z0-9_-]{24,120}",
  "lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
  "sntry[su]_[A-Za-z0-9_+/=]{30,400}",
  "SG\\.[A-Za-z0-9_-]{16,32}\\.[A-Za-z0-9_-]{16,64}",
  "GOCSPX-[A-Za-z0-9_-]{24,40}",
  "xapp-[0-9]-[A-Z0-9]{8,16}-[0-9]{8,16}-[a-f0-9]{32,80}",
  "pypi-AgE[A-Za-z0-9_-]{50,300}",
  "do[opr]_v1_[a-f0-9]{64}",
  "gh[sour]_[A-Za-z0-9]{36}",
  "github_pat_[A-Za-z0-9_]{60,100}",
  "[rs]k_live_[A-Za-z0-9]{16,247}",
  "dapi[a-f0-9]{32}(?:-[0-9])?",
  "hf_[A-Za-z]{30,40}",
  "gsk_[A-Za-z0-9]{48,56}",
  "r8_[A-Za-z0-9]{37}",
  "lin_api_[A-Za-z0-9]{40}",
  "ntn_[A-Za-z0-9]{40,50}",
  "secret_[A-Za-z0-9]{43}",
  "ATATT3[A-Za-z0-9_=-]{40,300}",
  "sq0(?:atp|csp)-[A-Za-z0-9_-]{22,50}",
  "PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
  "dp\\.(?:pt|st|sa|ct)\\.[A-Za-z0-9]{40,50}",
  "pul-[a-f0-9]{40}",
  "sbp_[a-f0-9]{40}",
  "pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}",
  "dckr_pat_[A-Za-z0-9_-]{27}",
  "gl(?:sa|c)_[A-Za-z0-9_+/=]{32,200}",
  "NRAK-[A-Z0-9]{27}",
  "xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
  "key-[a-f0-9]{32}",
  "AGE-SECRET-KEY-1[A-Z0-9]{58}",
  "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,100}",
  "[A-Za-z0-9_~.-]{3}8Q~[A-Za-z0-9_~.-]{31,34}",
  "EAA[A-Za-z0-9]{90,250}"
].join("|")

/** Webhook URLs carry their secret in the path: the whole URL is the credential. */
const WEBHOOK_URLS = [
  "https://hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,120}",
  "https://(?:discord|discordapp)\\.com/api/webhooks/[0-9]{5,25}/[A-Za-z0-9_-]{40,100}",
  "https://[a-z0-9-]{1,63}\\.webhook\\.office\\.com/[^\\s\"'<>]{20,400}",
  "https://hooks\\.zapier\\.com/hooks/catch/[0-9]{3,12}/[a-z0-9]{4,12}/?"
].join("|")

const KNOWN_TOKENS: ReadonlyArray<RegexRule> = [
  {
    entity_type: "service_token",
    library: "credentials",
    severity: "critical",
    description: "Access token or key with a known vendor prefix",
    pattern: new RegExp(`(?<![A-Za-z0-9_+/.-])(?:${PREFIXED})(?![A-Za-z0-9_+/=-])`, "g")
  },
  {
    entity_type: "webhook_url",
    library: "credentials",
    severity: "critical",
    description: "Webhook URL whose path is its secret",
    hint: "https://",
    pattern: new RegExp(`(?:${WEBHOOK_URLS})`, "g")
  },
  {
    entity_type: "basic_auth",
    library: "credentials",
    severity: "critical",
    description: "HTTP Basic credentials in an Authorization header",
    pattern: /\bBasic[ \t]{1,3}([A-Za-z0-9+/]{8,512}={0,2})(?![A-Za-z0-9+/=])/dg,
    group: 1,
    validate: (value) => /[0-9A-Z]/.test(value) && value.length % 4 === 0
  }
]

/** Last words of a key name that make its value a secret. */
const SECRET_WORDS = new Set([
  "secret",
  "secrets",
  "token",
  "key",
  "apikey",
  "passkey",
  "credential",
  "credentials",
  "salt",
  "psk",
  "cookie",
  "sid",
  "auth",
  "passphrase",
  "password",
  "passwd",
  "pwd",
  "pass"
])
/** Words before "key"/"token" that name something public or structural. */
const PUBLIC_BEFORE = new Set([
  "public",
  "publishable",
  "primary",
  "foreign",
  "sort",
  "partition",
  "range",
  "cache",
  "idempotency",
  "unique",
  "composite",
  "hash",
  "map",
  "dict",
  "object",
  "translation",
  "i18n",
  "lookup",
  "index",
  "row",
  "shard",
  "routing",
  "encryption_context",
  "next",
  "page",
  "pagination",
  "continuation",
  "csrf",
  "max",
  "total",
  "input",
  "output",
  "prompt",
  "completion",
  "site"
])
/** Words after a secret word that make the name about the secret, not the secret (`token_url`, `key_id`). */
const TRAILING_OK = new Set(["value", "b64", "base64", "hex", "raw", "plain", "plaintext"])

/** The words of an identifier: snake, kebab, dotted and camel case all split. */
const wordsOf = (name: string): Array<string> =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0)

export const secretName = (name: string): boolean => {
  const words = wordsOf(name)
  let last = words.length - 1
  while (last > 0 && TRAILING_OK.has(words[last]!)) last--
  const word = words[last]
  if (word === undefined || !SECRET_WORDS.has(word)) return false
  const before = words[last - 1]
  if ((word === "key" || word === "token") && before !== undefined && PUBLIC_BEFORE.has(before)) return false
  // "auth" and "sid" alone are often modes or ids: only as the whole name or after session/cookie/basic words.
  if ((word === "auth" || word === "sid") && words.length > 1 && !["session", "cookie", "basic", "docker", "registry"].includes(before ?? "")) return false
  return true
}

const PLACEHOLDER =
  /^(?:<[^>]*>|\$\{[^}]*\}|\$\(?[A-Za-z_]\w*\)?|\{\{.*\}\}|%[A-Za-z_]\w*%|\[[^\]]*\]|[*•●xX#.]+|(?:your|my|the|new|some|example|sample|dummy|fake|test|placeholder|insert|enter|replace)[-_ ].*|changeme|change[-_]me|secret|password|token|none|null|nil|true|false|undefined|todo|tbd|redacted|hidden|required|optional|string|env|\.\.\.)$/i
const CODE_REFERENCE = /^(?:(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*|[A-Za-z_$][\w$.]*\(.*|(?:os\.environ|process\.env|ENV|env)\b.*)$/
/** Paths, file references (`@file`, as curl and vault take them) and URLs without credentials. */
const PATH = /^(?:\/|\.{1,2}\/|~\/|[A-Za-z]:\\|file:|@[\w./-]+$|https?:\/\/[^@]*$)/

/** A value that could be a credential: not a placeholder, code, a path, a plain word or a small number. */
export const secretValue = (value: string, passwordLike: boolean): boolean => {
  if (PLACEHOLDER.test(value) || CODE_REFERENCE.test(value) || PATH.test(value)) return false
  if (/^[0-9]{1,7}$/.test(value)) return false
  // Resource ids that look random but name a record, not a credential (Twilio's SM…/AC…/CA… ids).
  if (/^[A-Z]{2}[a-f0-9]{32}$/.test(value)) return false
  if (passwordLike) return value.length >= 4 && (/[^A-Za-z]/.test(value) || /[a-z][A-Z]/.test(value) || value.length >= 12)
  return value.length >= 12 && /[0-9]/.test(value) !== /^[0-9]+$/.test(value) && entropy(value) >= 3
}

/**
 * `name = value`, `name: value`, `"name": "value"`, `name=value` in a log line or query string.
 * The value is quoted (any characters but the quote) or a bare run up to a space, comma, quote
 * or `&`; only the value is reported.
 */
const ASSIGNMENT =
  /(?<![A-Za-z0-9_.-])["']?([A-Za-z_][A-Za-z0-9_.-]{0,79})["']?[ \t]{0,8}(?:=>|:=|=|:)[ \t]{0,8}(?:"([^"\r\n]{1,512})"|'([^'\r\n]{1,512})'|`([^`\r\n]{1,512})`|([^\s"'`,;&<>{}()[\]]{1,512}))/dg

const PASSWORD_WORDS = new Set(["password", "passwd", "pwd", "pass", "passphrase"])

const assignedSecrets = (text: string, emit: Emit): void => {
  if (!/[=:]/.test(text)) return
  const pattern = new RegExp(ASSIGNMENT.source, ASSIGNMENT.flags)
  let hits = 0
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const name = m[1]!
    if (!secretName(name)) continue
    const group = m[2] !== undefined ? 2 : m[3] !== undefined ? 3 : m[4] !== undefined ? 4 : 5
    let [start, end] = m.indices![group]!
    if (group === 5) while (end > start && ".,;:!?".includes(text[end - 1]!)) end--
    const value = text.slice(start, end)
    const words = wordsOf(name)
    if (!secretValue(value, PASSWORD_WORDS.has(words[words.length - 1]!))) continue
    if (!emit(start, end) || ++hits >= MAX_HITS_PER_DETECTOR) return
  }
}

const ASSIGNED_SECRET: Detector = {
  entity_type: "generic_secret",
  library: "credentials",
  severity: "critical",
  description: "Value assigned to a key whose name says it is secret",
  run: assignedSecrets
}

export const TOKEN_DETECTORS: ReadonlyArray<Detector> = [...KNOWN_TOKENS.map(regexDetector), ASSIGNED_SECRET]
