/**
 * The `pii` and `credentials` libraries: src/scan's recognizers (renamed where the sanitize
 * spec names the entity differently) plus what only sanitize reports (URLs, street addresses,
 * NHS numbers, test-mode and Google keys, context-anchored high-entropy secrets).
 */
import { CREDENTIAL_RECOGNIZERS, PII_RECOGNIZERS, type Recognizer, ssnValid } from "../scan/index.js"
import { ADDRESS_DETECTOR } from "./addresses.js"
import { type Detector, type RegexRule, regexDetector } from "./detector.js"
import { PERSONAL_DETECTORS } from "./personal.js"
import { PHONE_DETECTORS } from "./phones.js"
import { notCode, SECRET_RULES } from "./secrets.js"
import { TABLE_DETECTORS, TABLE_SECRET_DETECTOR } from "./tables.js"
import { TOKEN_DETECTORS } from "./tokens.js"
import { entropy, nhsNumberValid } from "./validators.js"

const RENAMED: Readonly<Record<string, string>> = { email: "email_address", phone: "phone_number" }

/** Digits right after an IBAN's country code and check digits are its account part, not a card. */
const outsideIban = (validate: NonNullable<Recognizer["validate"]>) => (match: string, text: string, start: number) =>
  /[A-Z]{2}\d{2} ?$/.test(text.slice(Math.max(0, start - 5), start)) ? 0 : validate(match)

/** `user:pass@host` in a URL is a password and a host, not an e-mail address. */
const outsideUrlUserInfo = (match: string, text: string, start: number) =>
  !/:\/\/[^\s:/@]{0,64}:$/.test(text.slice(Math.max(0, start - 80), start)) && match.length > 0

/** Numbers card networks publish for testing: nobody's card, and named as such just before ("test cards such as"). */
const TEST_CARD_CONTEXT = /\b(?:(?:test|testing|sample|example|dummy|fake)[ -](?:mode|cards?|numbers?|visa|mastercard|payments?)|sandbox|test[ -]mode)\b[^\n]{0,60}$/i

/** A card number right after "test card", "sandbox" or "example" is a documented test number. */
const outsideTestContext = (validate: NonNullable<RegexRule["validate"]>) => (match: string, text: string, start: number) =>
  TEST_CARD_CONTEXT.test(text.slice(Math.max(0, start - 80), start)) ? 0 : validate(match, text, start)

/** A PEM header quoted in prose is not a key: a key block has its base64 body right after. */
const pemBody = (_match: string, text: string, start: number): boolean =>
  /^-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----\s{0,4}(?:[A-Za-z0-9+/=]{20}|Proc-Type|Comment)/.test(text.slice(start, start + 160))

/** Sanitize's own validators for some scan recognizers (see src/sanitize/secrets.ts). */
const sanitizeValidate = (recognizer: Recognizer): RegexRule["validate"] => {
  const validate = recognizer.validate
  if (recognizer.entity_type === "credit_card" && validate !== undefined) return outsideTestContext(outsideIban(validate))
  if (recognizer.entity_type === "private_key_block") return pemBody
  // A token of letters and dashes only ("xoxb-your-bot-token") is a placeholder.
  if (recognizer.entity_type === "slack_token") return (match) => /[0-9]/.test(match)
  if (recognizer.entity_type === "email")
    return (match, text, start) => outsideUrlUserInfo(match, text, start) && (validate === undefined || validate(match) !== false)
  if (recognizer.entity_type === "api_key_assignment" && validate !== undefined) return (match) => notCode(match) && validate(match)
  return validate
}

const fromScan = (recognizer: Recognizer): RegexRule => {
  const validate = sanitizeValidate(recognizer)
  return {
    ...recognizer,
    entity_type: RENAMED[recognizer.entity_type] ?? recognizer.entity_type,
    library: recognizer.library === "credentials" ? "credentials" : "pii",
    ...(validate === undefined ? {} : { validate })
  }
}

/** Sanitize's password rules (src/sanitize/secrets.ts) cover scan's and reject code references and labels. */
const SCAN_CREDENTIALS = CREDENTIAL_RECOGNIZERS.filter((r) => r.entity_type !== "password_assignment")

/** Trailing sentence punctuation is not part of a URL. */
const urlLength = (match: string): number => {
  let end = match.length
  while (end > 0 && ".,;:!?)]}'\"".includes(match[end - 1])) end--
  return end
}

const PII_EXTRA: ReadonlyArray<RegexRule> = [
  {
    entity_type: "url",
    library: "pii",
    severity: "info",
    description: "Web address",
    pattern: /\b(?:[a-z][a-z0-9+.-]{1,15}:\/\/|www\.)[^\s<>"'`]{1,2048}/gi,
    validate: urlLength
  },
  {
    entity_type: "us_ssn",
    library: "pii",
    severity: "critical",
    description: "US Social Security number without separators, next to its label",
    pattern: /\b(?:SSN|SS#|social security(?: number| no\.?| #)?)\s{0,3}[:#]?\s{0,3}(\d{9})\b/dgi,
    group: 1,
    validate: ssnValid
  },
  {
    entity_type: "nhs_number",
    library: "pii",
    severity: "critical",
    description: "UK NHS number (mod-11 valid) next to its label",
    hint: "NHS",
    pattern: /\bNHS(?: number| no\.?| #)?:? {0,3}(\d{3}[ -]?\d{3}[ -]?\d{4})\b/dgi,
    group: 1,
    validate: nhsNumberValid
  }
]

/** Accepts the value without trailing sentence dots when it looks random enough to be a secret. */
const secretLength = (match: string): number => {
  let end = match.length
  while (end > 0 && match[end - 1] === ".") end--
  const value = match.slice(0, end)
  const random = value.length >= 16 && /[0-9]/.test(value) && /[A-Za-z]/.test(value) && entropy(value) >= 3.3
  return random ? end : 0
}

const CREDENTIAL_EXTRA: ReadonlyArray<RegexRule> = [
  {
    entity_type: "gitlab_token",
    library: "credentials",
    severity: "critical",
    description: "GitLab personal, project or group access token",
    hint: "glpat-",
    pattern: /\bglpat-[A-Za-z0-9_-]{20,64}/g
  },
  {
    entity_type: "stripe_key",
    library: "credentials",
    severity: "critical",
    description: "Stripe test secret or restricted key",
    hint: "_test_",
    pattern: /\b(?:sk|rk)_test_[A-Za-z0-9]{16,247}\b/g
  },
  {
    entity_type: "google_api_key",
    library: "credentials",
    severity: "critical",
    description: "Google API key",
    hint: "AIza",
    pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g
  },
  {
    entity_type: "generic_secret",
    library: "credentials",
    severity: "critical",
    description: "High-entropy value after a key, secret, token or password label",
    pattern:
      /\b(?:[a-z]{1,20}[_-])?(?:token|key|secret|password|passwd|credential|apikey)s?["']?\s{0,4}(?:[:=]|is)\s{0,4}["']?([A-Za-z0-9+/_.~=-]{16,256})/dgi,
    group: 1,
    validate: secretLength
  }
]

/** Sanitize finds phone numbers with its own rules (./phones.ts) rather than the scanner's pattern. */
const SCAN_PII = PII_RECOGNIZERS.filter((recognizer) => recognizer.entity_type !== "phone")

export const PII_DETECTORS: ReadonlyArray<Detector> = [...[...SCAN_PII.map(fromScan), ...PII_EXTRA].map(regexDetector), ADDRESS_DETECTOR, ...PHONE_DETECTORS, ...PERSONAL_DETECTORS, ...TABLE_DETECTORS]
export const CREDENTIAL_DETECTORS: ReadonlyArray<Detector> = [
  ...[...SCAN_CREDENTIALS.map(fromScan), ...SECRET_RULES, ...CREDENTIAL_EXTRA].map(regexDetector),
  ...TOKEN_DETECTORS,
  TABLE_SECRET_DETECTOR
]
