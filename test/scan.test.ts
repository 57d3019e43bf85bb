import { describe, expect, it } from "vitest"
import {
  BUILTIN_RECOGNIZERS,
  compileCustomPatterns,
  DEFAULT_OUTPUT_POLICY,
  type Finding,
  filterOutput,
  ibanValid,
  luhnValid,
  mergeOutputPolicy,
  redact,
  scanText
} from "../src/scan/index.js"

const both = { libraries: ["credentials", "pii"] as const }
const scan = (text: string) => scanText(text, { libraries: ["credentials", "pii"] })
const types = (findings: ReadonlyArray<Finding>) => findings.map((f) => f.entity_type).sort()
const find = (findings: ReadonlyArray<Finding>, entity: string) => findings.find((f) => f.entity_type === entity)

// Test secrets are assembled from pieces so this file itself does not look like a leak.
const AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
const GITHUB_TOKEN = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
const PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
const PRIVATE_KEY = `-----BEGIN RSA ${"PRIVATE"} KEY-----\n${PEM_BODY}-----END RSA ${"PRIVATE"} KEY-----`

describe("validators", () => {
  it("Luhn accepts known-good numbers and rejects a changed digit", () => {
    expect(luhnValid("4111111111111111")).toBe(true)
    expect(luhnValid("79927398713")).toBe(true)
    expect(luhnValid("4111111111111112")).toBe(false)
  })
  it("IBAN mod-97", () => {
    expect(ibanValid("GB82 WEST 1234 5698 7654 32")).toBe(true)
    expect(ibanValid("DE89370400440532013000")).toBe(true)
    expect(ibanValid("GB82 WEST 1234 5698 7654 33")).toBe(false)
  })
})

describe("scanText: pii", () => {
  it("finds a Luhn-valid card and ignores a Luhn-invalid one", () => {
    const valid = scan("card 4111 1111 1111 1111 on file")
    expect(find(valid, "credit_card")?.count).toBe(1)
    expect(find(valid, "credit_card")?.severity).toBe("critical")
    expect(find(scan("card 4111 1111 1111 1112 on file"), "credit_card")).toBeUndefined()
    expect(find(scan("card 4111-1111-1111-1111"), "credit_card")?.matches[0]).toEqual({ start: 5, end: 24 })
    // A trailing security code after a separator does not hide the card.
    expect(find(scan("card 4111 1111 1111 1111 123 exp 12/27"), "credit_card")?.matches[0]).toEqual({
      start: 5,
      end: 24
    })
    // A longer run of digits is not cut down to a card-shaped prefix.
    expect(find(scan("id 41111111111111110"), "credit_card")).toBeUndefined()
  })

  it("finds SSNs and respects the reserved ranges", () => {
    const text = "ssn 123-45-6789"
    const finding = find(scan(text), "us_ssn")
    expect(finding?.count).toBe(1)
    expect(text.slice(finding!.matches[0].start, finding!.matches[0].end)).toBe("123-45-6789")
    for (const bad of ["000-12-3456", "666-12-3456", "912-12-3456", "123-00-4567", "123-45-0000", "123-45 6789"]) {
      expect(find(scan(`ssn ${bad}`), "us_ssn"), bad).toBeUndefined()
    }
  })

  it("finds IBANs with a valid checksum only", () => {
    expect(find(scan("pay to GB82 WEST 1234 5698 7654 32 today"), "iban")?.count).toBe(1)
    expect(find(scan("pay to DE89370400440532013000."), "iban")?.count).toBe(1)
    expect(find(scan("pay to GB82 WEST 1234 5698 7654 33 today"), "iban")).toBeUndefined()
  })

  it("finds e-mail, phone, IP and date of birth with their severities", () => {
    const findings = scan(
      "Mail jane.doe@example.co.uk or call +1 415 555 0132 / (415) 555-0199 from 10.0.0.12; DOB: 04/12/1987"
    )
    expect(find(findings, "email")).toMatchObject({ severity: "warning", count: 1 })
    expect(find(findings, "phone")).toMatchObject({ severity: "warning", count: 2 })
    expect(find(findings, "ip_address")).toMatchObject({ severity: "info", count: 1 })
    expect(find(findings, "date_of_birth")).toMatchObject({ severity: "warning", count: 1 })
    expect(find(scan("born on March 3, 1990"), "date_of_birth")?.count).toBe(1)
    expect(find(scan("gateway fe80::1ff:fe23:4567:890a up"), "ip_address")?.count).toBe(1)
    expect(find(scan("at 12:30:45 today"), "ip_address")).toBeUndefined()
    expect(find(scan("version 1.2.3.4.5"), "ip_address")).toBeUndefined()
  })

  it("runs only the requested libraries", () => {
    const text = `key ${AWS_KEY} mail a@b.io`
    expect(types(scanText(text, { libraries: ["pii"] }))).toEqual(["email"])
    expect(types(scanText(text, { libraries: ["credentials"] }))).toEqual(["aws_access_key"])
    expect(scanText(text, { libraries: [] })).toEqual([])
  })
})

describe("scanText: credentials", () => {
  it("finds an AWS key pair, reporting only the secret value for the context-anchored secret", () => {
    const text = `aws_access_key_id=${AWS_KEY}\naws_secret_access_key = "${AWS_SECRET}"`
    const findings = scan(text)
    expect(find(findings, "aws_access_key")?.count).toBe(1)
    const secret = find(findings, "aws_secret_key")!
    expect(text.slice(secret.matches[0].start, secret.matches[0].end)).toBe(AWS_SECRET)
    expect(find(scan(AWS_SECRET), "aws_secret_key")).toBeUndefined()
  })

  it("finds GitHub, Slack, Stripe, model-provider and own API keys", () => {
    const text = [
      GITHUB_TOKEN,
      "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
      "xox" + "b-123456789012-abcdefghijklmnop",
      "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
      "sk-" + "ant-api03-" + "abcdefghijklmnopqrstuvwx",
      "sk-" + "proj-" + "abcdefghijklmnopqrstuvwx",
      "svc_" + "live_" + "3mJr7AoUXx2Wqd4fJq8o9Gk1ZCk2vLx5NbPq7sHt6Wy"
    ].join(" ")
    const findings = scan(text)
    expect(find(findings, "github_token")?.count).toBe(2)
    expect(types(findings)).toEqual([
      "anthropic_api_key",
      "github_token",
      "openai_api_key",
      "service_api_key",
      "slack_token",
      "stripe_key"
    ])
  })

  it("finds a private key block and covers its whole body", () => {
    const text = `config:\n${PRIVATE_KEY}\nend`
    const finding = find(scan(text), "private_key_block")!
    expect(finding.count).toBe(1)
    expect(text.slice(finding.matches[0].start, finding.matches[0].end)).toBe(PRIVATE_KEY)
    // A truncated block (no END line) still covers the base64 that follows.
    const truncated = `-----BEGIN ${"PRIVATE"} KEY-----\n${PEM_BODY}`
    const partial = find(scan(truncated), "private_key_block")!
    expect(partial.matches[0].end).toBe(truncated.length)
  })

  it("finds JWTs, bearer tokens and password / api key assignments, skipping placeholders", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    expect(find(scan(`token ${jwt}`), "jwt")?.count).toBe(1)
    expect(find(scan(`Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345`), "bearer_token")?.count).toBe(1)
    expect(find(scan("password=hunter2hunter2"), "password_assignment")?.count).toBe(1)
    expect(find(scan(`{"api_key": "q8Z3xk2Lw9"}`), "api_key_assignment")?.count).toBe(1)
    for (const placeholder of ["password=********", "password: <your-password>", "api_key=$" + "{API_KEY}", "password: changeme"]) {
      expect(types(scan(placeholder)), placeholder).toEqual([])
    }
  })

  it("reports spans in UTF-16 code units", () => {
    const text = `é😀 ${AWS_KEY}`
    const finding = find(scan(text), "aws_access_key")!
    expect(text.slice(finding.matches[0].start, finding.matches[0].end)).toBe(AWS_KEY)
  })
})

describe("custom patterns", () => {
  it("compiles with re2js, reports findings under the pattern name", () => {
    const compiled = compileCustomPatterns([
      { name: "project_code", regex: "PRJ-[0-9]{4}", severity: "critical", description: "internal project code" }
    ])
    expect(compiled.ok).toBe(true)
    if (!compiled.ok) return
    const findings = scanText("see PRJ-1234 and PRJ-9999", { libraries: [], customPatterns: compiled.patterns })
    expect(findings).toEqual([
      {
        entity_type: "project_code",
        severity: "critical",
        library: "custom",
        description: "internal project code",
        count: 2,
        matches: [
          { start: 4, end: 12 },
          { start: 17, end: 25 }
        ]
      }
    ])
  })

  it("ignores empty matches", () => {
    const compiled = compileCustomPatterns([{ name: "maybe_x", regex: "x*" }])
    if (!compiled.ok) throw new Error("should compile")
    const findings = scanText("abxxc", { libraries: [], customPatterns: compiled.patterns })
    expect(findings[0]).toMatchObject({ count: 1, severity: "warning", matches: [{ start: 2, end: 4 }] })
  })

  it("rejects uncompilable and over-long regexes as INVALID_REGEX, shape problems as VALIDATION_ERROR", () => {
    const bad = compileCustomPatterns([{ name: "a", regex: "(unclosed" }, { name: "b", regex: "x".repeat(1001) }])
    expect(bad.ok).toBe(false)
    if (bad.ok) return
    expect(bad.code).toBe("INVALID_REGEX")
    expect(bad.issues.map((i) => i.path)).toEqual(["custom_patterns[0].regex", "custom_patterns[1].regex"])
    const lookahead = compileCustomPatterns([{ name: "a", regex: "(?=x)" }])
    expect(lookahead.ok || lookahead.code).toBe("INVALID_REGEX")
    const shape = compileCustomPatterns([{ name: "", regex: "x", severity: "high" }])
    expect(shape.ok || shape.code).toBe("VALIDATION_ERROR")
    if (!shape.ok) expect(shape.issues.map((i) => i.path)).toEqual(["custom_patterns[0].name", "custom_patterns[0].severity"])
  })
})

describe("redact", () => {
  it("removes every secret and keeps the rest of the text", () => {
    const text = `key ${AWS_KEY}, ssn 123-45-6789, mail jane@example.com, host 10.1.2.3\n${PRIVATE_KEY}`
    const out = redact(text, scan(text))
    for (const secret of [AWS_KEY, "123-45-6789", "jane@example.com", PEM_BODY.slice(0, 20), "PRIVATE KEY"]) {
      expect(out).not.toContain(secret)
    }
    expect(out).toContain("[REDACTED:AWS_ACCESS_KEY]")
    expect(out).toContain("[REDACTED:US_SSN]")
    expect(out).toContain("[REDACTED:EMAIL]")
    expect(out).toContain("[REDACTED:PRIVATE_KEY_BLOCK]")
    expect(out.startsWith("key [REDACTED:AWS_ACCESS_KEY], ssn ")).toBe(true)
  })

  it("never replaces info findings, even with minSeverity info", () => {
    const text = "from 192.168.1.20"
    const findings = scan(text)
    expect(find(findings, "ip_address")).toBeDefined()
    expect(redact(text, findings, { minSeverity: "info" })).toBe(text)
  })

  it("honours minSeverity", () => {
    const text = "ssn 123-45-6789 mail jane@example.com"
    expect(redact(text, scan(text), { minSeverity: "critical" })).toBe("ssn [REDACTED:US_SSN] mail jane@example.com")
  })

  it("merges overlapping spans under the most severe label", () => {
    const findings: Array<Finding> = [
      { entity_type: "a", severity: "warning", library: "pii", description: "", count: 1, matches: [{ start: 0, end: 6 }] },
      { entity_type: "b", severity: "critical", library: "pii", description: "", count: 1, matches: [{ start: 4, end: 10 }] }
    ]
    expect(redact("0123456789xyz", findings)).toBe("[REDACTED:B]xyz")
  })
})

describe("filterOutput", () => {
  const text = `done; key ${AWS_KEY}; contact jane@example.com`

  it("flag mode reports and changes nothing", () => {
    const result = filterOutput(text, DEFAULT_OUTPUT_POLICY)
    expect(result.denied).toBe(false)
    expect(result.redacted_text).toBeUndefined()
    expect(result.flags).toEqual([
      { entity_type: "aws_access_key", severity: "critical", library: "credentials", count: 1 },
      { entity_type: "email", severity: "warning", library: "pii", count: 1 }
    ])
  })

  it("deny mode denies at or above the threshold only", () => {
    expect(filterOutput(text, { ...DEFAULT_OUTPUT_POLICY, mode: "deny" }).denied).toBe(true)
    const onlyEmail = "contact jane@example.com"
    expect(filterOutput(onlyEmail, { ...DEFAULT_OUTPUT_POLICY, mode: "deny" }).denied).toBe(false)
    expect(
      filterOutput(onlyEmail, { ...DEFAULT_OUTPUT_POLICY, mode: "deny", deny_severity_threshold: "warning" }).denied
    ).toBe(true)
  })

  it("redact mode returns cleaned text", () => {
    const result = filterOutput(text, { ...DEFAULT_OUTPUT_POLICY, mode: "redact", redact_severity_threshold: "critical" })
    expect(result.redacted_text).toBe("done; key [REDACTED:AWS_ACCESS_KEY]; contact jane@example.com")
    expect(result.flags).toHaveLength(2)
  })

  it("disabled does nothing", () => {
    expect(filterOutput(text, { ...DEFAULT_OUTPUT_POLICY, enabled: false, mode: "deny" })).toEqual({
      flags: [],
      denied: false
    })
  })

  it("validates a partial update", () => {
    const ok = mergeOutputPolicy(DEFAULT_OUTPUT_POLICY, { mode: "redact", extra: 1 })
    expect(ok).toEqual({ ok: true, policy: { ...DEFAULT_OUTPUT_POLICY, mode: "redact" } })
    const bad = mergeOutputPolicy(DEFAULT_OUTPUT_POLICY, { mode: "block", libraries: ["pii", "dna"], deny_severity_threshold: 3 })
    expect(bad.ok || bad.issues.map((i) => i.path)).toEqual(["mode", "libraries[1]", "deny_severity_threshold"])
  })
})

describe("scanner cost stays linear", () => {
  const size = 60_000
  const adversarial = [
    "a".repeat(size),
    "1".repeat(size),
    "1-".repeat(size / 2),
    "1 ".repeat(size / 2),
    "a.".repeat(size / 2),
    "a@".repeat(size / 2),
    "-eyJ".repeat(size / 4),
    `${"eyJ".repeat(size / 3)}.`,
    "+1 ".repeat(size / 3),
    "password=".repeat(size / 9),
    "bearer ".repeat(size / 7),
    ":".repeat(size),
    "a:".repeat(size / 2),
    "1.".repeat(size / 2),
    "ghp_".repeat(size / 4),
    "DE89 ".repeat(size / 5),
    "AB12".repeat(size / 4),
    "-----BEGIN PRIVATE KEY-----".repeat(size / 27),
    "dob: ".repeat(size / 5),
    "(123) ".repeat(size / 6)
  ]
  it.each(adversarial.map((text, i) => [i, text] as const))("input %i scans in bounded time", (_i, text) => {
    const started = performance.now()
    scanText(text, both as never)
    // Quadratic behaviour on 60k characters takes seconds; linear takes a few ms.
    expect(performance.now() - started).toBeLessThan(1_000)
  })

  it("hints are contained in every match they guard", () => {
    const samples = [
      "xox" + "b-123456789012-abcdefghijklmnop",
      "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
      "sk-" + "ant-api03-" + "abcdefghijklmnopqrstuvwx sk-" + "abcdefghijklmnopqrstuvwx",
      "svc_" + "live_" + "3mJr7AoUXx2Wqd4fJq8o9Gk1ZCk2vLx5NbPq7sHt6Wy",
      PRIVATE_KEY,
      "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".sig",
      "a@b.io 10.0.0.1 fe80::1ff:fe23:4567:890a"
    ]
    for (const recognizer of BUILTIN_RECOGNIZERS) {
      if (recognizer.hint === undefined) continue
      const pattern = new RegExp(recognizer.pattern.source, recognizer.pattern.flags)
      let seen = 0
      for (const sample of samples) {
        for (const match of sample.matchAll(pattern)) {
          seen++
          expect(match[0], recognizer.entity_type).toContain(recognizer.hint)
        }
      }
      expect(seen, recognizer.entity_type).toBeGreaterThan(0)
    }
  })

  it("every built-in pattern is global (one pass per recognizer)", () => {
    for (const recognizer of BUILTIN_RECOGNIZERS) {
      expect(recognizer.pattern.global, recognizer.entity_type).toBe(true)
      if (recognizer.group !== undefined) expect(recognizer.pattern.hasIndices, recognizer.entity_type).toBe(true)
    }
  })
})
