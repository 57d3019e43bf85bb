/**
 * The pure parts of compliance reports: Article 9 classification (a table of the contract's
 * examples, then properties of token splitting and precedence), the period rules, and the
 * portable descriptor verifier against a key made here.
 */
import { generateKeyPairSync, sign } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalBytes, REPORT_DESCRIPTOR_FIELDS, reportDescriptor, sha256Tagged, verifyReportDescriptor } from "../protocol/verifier/index.js"
import { ART9_CATEGORIES, ART9_KEYS, Art9Tally, actionTypeTokens, art9Keywords, classifyAction } from "../src/compliance/art9.js"
import { addYears, readPeriod } from "../src/compliance/service.js"
import { renderPdf } from "../src/platform/pdf.js"
import { renderPdfOffThread, startPdfJob } from "../src/platform/pdf-thread.js"

const HIGH = ART9_KEYS.filter((key) => key !== "other")
const allKeywords = new Set(HIGH.flatMap((key) => art9Keywords(key)))
/** Separators: anything that is not [a-z0-9] once lower-cased. */
const separator = fc.constantFrom("_", "-", ".", " ", "/", ":", "+", "é", "__")
const neutralWord = fc.stringMatching(/^[a-z0-9]{1,8}$/).filter((word) => !allKeywords.has(word))

describe("Article 9 classification", () => {
  it.each([
    ["face_match", "biometric_identification"],
    ["SCADA.write", "critical_infrastructure"],
    ["exam-grading", "education_vocational"],
    ["Hiring.Screen", "employment_hr"],
    ["loan_approval", "essential_services"],
    ["police report", "law_enforcement"],
    ["visa_check", "migration_asylum"],
    ["election-results", "justice_democracy"],
    ["weather_lookup", "other"],
    // A keyword must be a whole token: "facebook" and "resumed" are not "face" or "resume".
    ["facebook_post", "other"],
    ["resumed_job", "other"],
    // Annex III order: biometrics (1) before essential services (5).
    ["loan_face_check", "biometric_identification"],
    ["", "other"]
  ])("%s → %s", (actionType, key) => {
    expect(classifyAction(actionType).key).toBe(key)
  })

  it("lists nine categories in Annex III order, eight high and `other` low", () => {
    expect(ART9_CATEGORIES.map((category) => [category.key, category.annex_iii_point, category.risk_level])).toEqual([
      ["biometric_identification", 1, "high"],
      ["critical_infrastructure", 2, "high"],
      ["education_vocational", 3, "high"],
      ["employment_hr", 4, "high"],
      ["essential_services", 5, "high"],
      ["law_enforcement", 6, "high"],
      ["migration_asylum", 7, "high"],
      ["justice_democracy", 8, "high"],
      ["other", null, "low"]
    ])
  })

  it("property: tokens are the lower-cased alphanumeric runs, whatever separates them", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[A-Za-z0-9]{1,10}$/), { minLength: 1, maxLength: 6 }), fc.array(separator, { minLength: 6, maxLength: 6 }), (words, seps) => {
        const joined = words.map((word, index) => (index === 0 ? word : `${seps[index - 1]}${word}`)).join("")
        expect(actionTypeTokens(joined)).toEqual(words.map((word) => word.toLowerCase()))
      })
    )
  })

  it("property: the earliest category (Annex III order) among the keywords present wins, in any position and case", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...HIGH), { minLength: 1, maxLength: 4 }),
        fc.array(neutralWord, { maxLength: 3 }),
        separator,
        fc.boolean(),
        (categories, filler, sep, upper) => {
          const words = [...categories.map((key) => art9Keywords(key)[0]!), ...filler].reverse()
          const actionType = words.join(sep)
          const expected = HIGH.find((key) => categories.includes(key))
          expect(classifyAction(upper ? actionType.toUpperCase() : actionType).key).toBe(expected)
        }
      )
    )
  })

  it("property: without a keyword the action is `other`; a context category naming a category always wins", () => {
    fc.assert(
      fc.property(fc.array(neutralWord, { minLength: 1, maxLength: 4 }), separator, fc.constantFrom(...ART9_KEYS), fc.string(), (words, sep, named, junk) => {
        const actionType = words.join(sep)
        expect(classifyAction(actionType).key).toBe("other")
        expect(classifyAction(actionType, named).key).toBe(named)
        expect(classifyAction(`${art9Keywords("law_enforcement")[0]}${sep}${actionType}`, named).key).toBe(named)
        // Anything that names no category is ignored.
        if (!ART9_KEYS.includes(junk)) expect(classifyAction(actionType, junk).key).toBe("other")
        expect(classifyAction(actionType, 5).key).toBe("other")
      })
    )
  })

  it("tallies per category and per agent, keeping each category's first five actions as samples", () => {
    const tally = new Art9Tally("_default")
    for (let i = 0; i < 7; i++) tally.add({ action_uuid: `a${i}`, agent_id: i % 2 === 0 ? "x" : null, action_type: "face_scan", art9_category: null, created_at: `2026-01-01T00:00:0${i}.000Z` })
    tally.add({ action_uuid: "b", agent_id: "x", action_type: "loan", art9_category: "other", created_at: "2026-01-02T00:00:00.000Z" })
    expect(tally.categories.biometric_identification).toEqual({ count: 7, risk_level: "high", annex_iii_point: 1, sample_action_uuids: ["a0", "a1", "a2", "a3", "a4"] })
    expect(tally.categories.other!.count).toBe(1)
    expect(tally.agentCounts().map((row) => [row.agent_id, row.category, row.action_count, row.first_seen_at, row.last_seen_at])).toEqual([
      ["_default", "biometric_identification", 3, "2026-01-01T00:00:01.000Z", "2026-01-01T00:00:05.000Z"],
      ["x", "biometric_identification", 4, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:06.000Z"],
      ["x", "other", 1, "2026-01-02T00:00:00.000Z", "2026-01-02T00:00:00.000Z"]
    ])
  })
})

describe("report periods", () => {
  it("reads zoneless times as UTC, dates as whole days, and enforces order and the 366-day span", () => {
    const read = (start: string | null, end: string | null, framework: any = "eu_ai_act_art12") => readPeriod({ framework, period_start: start, period_end: end })
    expect(read("2026-04-01T00:00:00", "2026-04-02T12:30:00+02:00").period).toEqual({ start: "2026-04-01T00:00:00.000Z", end: "2026-04-02T10:30:00.000Z" })
    expect(read("2026-04-01", "2026-04-01").period).toEqual({ start: "2026-04-01T00:00:00.000Z", end: "2026-04-01T23:59:59.999Z" })
    expect(read("2025-01-01", "2025-12-31").issues).toEqual([])
    expect(read("2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z").issues).toEqual([]) // 366 days (leap year)
    expect(read("2024-01-01T00:00:00Z", "2025-01-01T00:00:00.001Z").issues.map((issue) => issue.path)).toEqual(["period_end"])
    expect(read("2026-04-02", "2026-04-01T00:00:00Z").issues.map((issue) => issue.path)).toEqual(["period_end"])
    expect(read(null, null).issues.map((issue) => issue.path)).toEqual(["period_start", "period_end"])
    expect(read(null, null, "eu_ai_act_art6")).toEqual({ period: { start: null, end: null }, issues: [] })
    expect(read("2026-04-01", null, "eu_ai_act_art6").issues.map((issue) => issue.path)).toEqual(["period_end"])
    expect(read("April 1st", "2026-13-01").issues.map((issue) => issue.path)).toEqual(["period_start", "period_end"])
  })

  it("retains for whole calendar years", () => {
    expect(addYears("2026-03-01T10:00:00.000Z", 6)).toBe("2032-03-01T10:00:00.000Z")
    expect(addYears("2026-11-25T22:00:00.123Z", 10)).toBe("2036-11-25T22:00:00.123Z")
  })
})

describe("portable report verifier", () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519")
  const jwk = { ...(publicKey.export({ format: "jwk" }) as { kty: "OKP"; crv: "Ed25519"; x: string }), kid: "rk_test" }
  const pdf = new Uint8Array(Buffer.from("%PDF-1.3 not really a report"))
  const report = {
    id: "r1",
    report_uuid: "r1",
    org_uuid: "o1",
    framework: "eu_ai_act_art12",
    period_start: "2026-04-01T00:00:00.000Z",
    period_end: "2026-04-30T23:59:59.999Z",
    action_uuid: null,
    agent_filter: ["a"],
    receipt_count: 2,
    pdf_size_bytes: pdf.length,
    content_hash: sha256Tagged(pdf),
    report_metadata: { retention_requirement_years: 6, article: "12", status_breakdown: { notarized: 2 } },
    generated_at: "2026-05-01T00:00:00.000Z",
    status: "ready"
  }
  const signature = `ed25519:${sign(null, canonicalBytes(reportDescriptor(report)), privateKey).toString("base64url")}`

  it("signs exactly the 12 descriptor keys and checks the PDF when given", () => {
    expect(Object.keys(reportDescriptor(report))).toEqual([...REPORT_DESCRIPTOR_FIELDS])
    const result = verifyReportDescriptor({ descriptor: report, signature, signing_key_id: "rk_test" }, [jwk], pdf)
    expect(result).toMatchObject({ valid: true, checks: { key_known: true, content_hash_matches: true, signature_valid: true } })
    expect("timestamp_token_matches" in result.checks).toBe(false)
    // Keys outside the descriptor do not matter.
    expect(verifyReportDescriptor({ descriptor: { ...report, status: "failed", extra: 1 }, signature, signing_key_id: "rk_test" }, [jwk]).valid).toBe(true)
  })

  it("property: changing any descriptor value breaks the signature", () => {
    fc.assert(
      fc.property(fc.constantFrom(...REPORT_DESCRIPTOR_FIELDS), fc.jsonValue({ maxDepth: 2 }), (field, value) => {
        fc.pre(JSON.stringify(value) !== JSON.stringify((report as Record<string, unknown>)[field] ?? null))
        const result = verifyReportDescriptor({ descriptor: { ...report, [field]: value }, signature, signing_key_id: "rk_test" }, [jwk])
        expect(result.valid).toBe(false)
        expect(result.checks.signature_valid).not.toBe(true)
      })
    )
  })

  it("names each failure: unknown key, other bytes, malformed signature, unreadable token", () => {
    const unknown = verifyReportDescriptor({ descriptor: report, signature, signing_key_id: "rk_other" }, [jwk], pdf)
    expect(unknown.checks).toMatchObject({ key_known: "signing key rk_other is not published", signature_valid: "not checked", content_hash_matches: true })
    const bytes = verifyReportDescriptor({ descriptor: report, signature, signing_key_id: "rk_test" }, [jwk], new Uint8Array([...pdf, 0]))
    expect(bytes.checks.content_hash_matches).toEqual(expect.stringContaining("the PDF hashes to"))
    const malformed = verifyReportDescriptor({ descriptor: report, signature: "ed25519:abc", signing_key_id: "rk_test" }, [jwk])
    expect(malformed.checks.signature_valid).toEqual(expect.stringContaining("malformed signature"))
    const token = verifyReportDescriptor({ descriptor: report, signature, signing_key_id: "rk_test", timestamp_token: "AAAA" }, [jwk])
    expect(token.valid).toBe(false)
    expect(token.checks.timestamp_token_matches).toEqual(expect.stringContaining("cannot be read"))
  })
})

describe("PDF thread", () => {
  const model = {
    title: "Thread",
    subtitle: "same bytes",
    createdAt: new Date("2026-04-01T00:00:00.000Z"),
    documentId: "doc-1",
    blocks: [{ kind: "paragraph" as const, text: "before" }]
  }

  it("renders the same bytes as renderPdf, rows streamed ahead included", async () => {
    expect(Buffer.from(await renderPdfOffThread(model)).equals(Buffer.from(await renderPdf(model)))).toBe(true)
    const job = startPdfJob()
    job.addRows([
      ["b", [["b1", "x"]]],
      ["a", [["a1", "y"]]]
    ])
    job.addRows([["b", [["b2", "z"]]]])
    const streamed = await job.render({ ...model, blocks: [...model.blocks, { kind: "collected", columns: ["id", "v"], heading: { one: "Group {key} - {n} row", many: "Group {key} - {n} rows" } }] })
    const direct = await renderPdf({
      ...model,
      blocks: [
        ...model.blocks,
        { kind: "heading", text: "Group a - 1 row" },
        { kind: "table", columns: ["id", "v"], rows: [["a1", "y"]] },
        { kind: "heading", text: "Group b - 2 rows" },
        {
          kind: "table",
          columns: ["id", "v"],
          rows: [
            ["b1", "x"],
            ["b2", "z"]
          ]
        }
      ]
    })
    expect(Buffer.from(streamed).equals(Buffer.from(direct))).toBe(true)
  })
})
