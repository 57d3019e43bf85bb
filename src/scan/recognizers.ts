/**
 * Built-in recognizers. Every quantifier is bounded or sits behind a literal prefix so
 * that a failed attempt costs at most a constant number of steps per start position:
 * scanning stays linear in the input length (checked in test/scan.test.ts).
 */
import type { Library, Recognizer } from "./types.js"
import {
  cardNumberPrefix,
  ibanValid,
  ipv6Valid,
  phoneValid,
  secretValueValid,
  ssnValid
} from "./validators.js"

/** After a PEM header, cover everything up to and including its END line (or the base64 run when END is missing). */
const extendPemBlock = (text: string, _start: number, end: number): number => {
  const endMarker = text.indexOf("-----END", end)
  if (endMarker !== -1) {
    const close = text.indexOf("-----", endMarker + 8)
    if (close !== -1 && close - endMarker < 80) return close + 5
  }
  let i = end
  while (i < text.length && /[A-Za-z0-9+/=\s:,-]/.test(text[i])) i++
  return i
}

const MONTH = "(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]{0,6}\\.?"

export const CREDENTIAL_RECOGNIZERS: ReadonlyArray<Recognizer> = [
  {
    entity_type: "aws_access_key",
    library: "credentials",
    severity: "critical",
    description: "AWS access key id",
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g
  },
  {
    entity_type: "aws_secret_key",
    library: "credentials",
    severity: "critical",
    description: "AWS secret access key next to its variable name",
    pattern: /aws_?secret_?(?:access_?)?key["']?\s{0,4}[:=]\s{0,4}["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/dgi,
    group: 1
  },
  {
    entity_type: "github_token",
    library: "credentials",
    severity: "critical",
    description: "GitHub access token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,251})\b/g
  },
  {
    entity_type: "slack_token",
    library: "credentials",
    severity: "critical",
    description: "Slack token",
    hint: "xox",
    pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,250}/g
  },
  {
    entity_type: "stripe_key",
    library: "credentials",
    severity: "critical",
    description: "Stripe live secret or restricted key",
    hint: "_live_",
    pattern: /\b(?:sk|rk)_live_[A-Za-z0-9]{16,247}\b/g
  },
  {
    entity_type: "anthropic_api_key",
    library: "credentials",
    severity: "critical",
    description: "Anthropic-style API key",
    hint: "sk-ant-",
    pattern: /\bsk-ant-[A-Za-z0-9_-]{20,250}/g
  },
  {
    entity_type: "openai_api_key",
    library: "credentials",
    severity: "critical",
    description: "OpenAI-style API key",
    hint: "sk-",
    pattern: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}/g
  },
  {
    entity_type: "service_api_key",
    library: "credentials",
    severity: "critical",
    description: "API key of this service",
    hint: "svc_",
    pattern: /\bsvc_(?:live|test)_[1-9A-HJ-NP-Za-km-z]{32,256}/g
  },
  {
    entity_type: "private_key_block",
    library: "credentials",
    severity: "critical",
    description: "PEM private key block",
    hint: "-----BEGIN",
    pattern: /-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----/g,
    extend: extendPemBlock
  },
  {
    entity_type: "jwt",
    library: "credentials",
    severity: "critical",
    description: "JSON Web Token",
    // The lookbehind lets a match start only at the beginning of a base64url run, so a
    // long run without the second `.eyJ` is walked once, not once per position.
    hint: ".eyJ",
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4096}\.eyJ[A-Za-z0-9_-]{5,8192}\.[A-Za-z0-9_-]{0,4096}/g
  },
  {
    entity_type: "bearer_token",
    library: "credentials",
    severity: "critical",
    description: "Bearer token in an authorization value",
    pattern: /\bbearer[ \t]{1,4}([A-Za-z0-9._~+/-]{20,4096}={0,2})/dgi,
    group: 1
  },
  {
    entity_type: "password_assignment",
    library: "credentials",
    severity: "critical",
    description: "Password assigned in text or configuration",
    pattern: /\b(?:password|passwd|pwd|passphrase)["']?\s{0,4}[:=]\s{0,4}("[^"\r\n]{1,256}"|'[^'\r\n]{1,256}'|[^\s"'&,;]{1,256})/dgi,
    group: 1,
    validate: secretValueValid
  },
  {
    entity_type: "api_key_assignment",
    library: "credentials",
    severity: "critical",
    description: "API key, token or client secret assigned in text or configuration",
    pattern: /\b(?:api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|secret)["']?\s{0,4}[:=]\s{0,4}("[^"\r\n]{1,256}"|'[^'\r\n]{1,256}'|[^\s"'&,;]{1,256})/dgi,
    group: 1,
    validate: secretValueValid
  }
]

export const PII_RECOGNIZERS: ReadonlyArray<Recognizer> = [
  {
    entity_type: "email",
    library: "pii",
    severity: "warning",
    description: "E-mail address",
    // Start only where the local-part run begins (RFC 5321 caps it at 64), for the same reason.
    hint: "@",
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b/g
  },
  {
    entity_type: "credit_card",
    library: "pii",
    severity: "critical",
    description: "Payment card number (Luhn-valid)",
    pattern: /\b\d(?:[ -]?\d){12,18}\b/g,
    validate: cardNumberPrefix
  },
  {
    entity_type: "us_ssn",
    library: "pii",
    severity: "critical",
    description: "US Social Security number",
    pattern: /\b\d{3}([- ])\d{2}\1\d{4}\b/g,
    validate: ssnValid
  },
  {
    entity_type: "iban",
    library: "pii",
    severity: "critical",
    description: "International bank account number (mod-97 valid)",
    pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g,
    validate: ibanValid
  },
  {
    entity_type: "phone",
    library: "pii",
    severity: "warning",
    description: "Telephone number",
    pattern:
      /\+[1-9]\d{7,14}\b|\+[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,4}){1,4}\b|(?:\(\d{3}\) ?|\b\d{3}[ .-])\d{3}[ .-]\d{4}\b/g,
    validate: phoneValid
  },
  {
    entity_type: "ip_address",
    library: "pii",
    severity: "info",
    description: "IPv4 address",
    hint: ".",
    pattern: /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\.?\d)/g
  },
  {
    entity_type: "ip_address",
    library: "pii",
    severity: "info",
    description: "IPv6 address",
    hint: ":",
    pattern: /(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])/g,
    validate: ipv6Valid
  },
  {
    entity_type: "date_of_birth",
    library: "pii",
    severity: "warning",
    description: "Date of birth next to its label",
    pattern: new RegExp(
      "\\b(?:dob|d\\.o\\.b\\.?|date of birth|birth ?date|born(?: on)?)\\s{0,3}[:=-]?\\s{0,3}" +
        `(\\d{1,2}[/.-]\\d{1,2}[/.-]\\d{2,4}|\\d{4}-\\d{2}-\\d{2}|${MONTH} \\d{1,2},? \\d{4}|\\d{1,2} ${MONTH},? \\d{4})`,
      "dgi"
    ),
    group: 1
  }
]

export const BUILTIN_RECOGNIZERS: ReadonlyArray<Recognizer> = [...CREDENTIAL_RECOGNIZERS, ...PII_RECOGNIZERS]

/** Libraries that have built-in recognizers today; `healthcare` and `prompt_injection` come later. */
export const AVAILABLE_LIBRARIES: ReadonlyArray<Library> = ["credentials", "pii"]

const byLibrary = new Map<Library, ReadonlyArray<Recognizer>>()
for (const recognizer of BUILTIN_RECOGNIZERS) {
  byLibrary.set(recognizer.library, [...(byLibrary.get(recognizer.library) ?? []), recognizer])
}

export const recognizersFor = (library: Library): ReadonlyArray<Recognizer> => byLibrary.get(library) ?? []
