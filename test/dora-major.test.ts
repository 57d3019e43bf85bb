/**
 * The DORA major-incident rule (Delegated Regulation (EU) 2024/1772 Arts. 6, 8, 9) as a pure
 * function: every threshold alone behind the critical-services gate (not major), just below and
 * just above each limit, every pair (major), the malicious-access path, the gate off with every
 * threshold met, the `missing` list; a property against a separately written model; and the
 * initial-notification deadline.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { CRITERIA_KEYS, type CriteriaInput, RtsThresholds } from "../protocol/dora.js"
import { assessMajor, type IncidentFacts } from "../src/dora/major.js"
import { initialNotificationDue } from "../src/dora/service.js"

const noFacts: IncidentFacts = { clients_affected_count: 0, geographic_scope: [] }
const gate = { critical_services_affected: true } as const

/** Each row: criteria (and incident facts) that meet exactly `met`, or nothing when `met` is null. */
const single: ReadonlyArray<{ name: string; criteria: CriteriaInput; facts?: IncidentFacts; met: string | null }> = [
  { name: "clients above 10 %", criteria: { clients_affected_pct: 10.01 }, met: "clients" },
  { name: "clients exactly 10 %", criteria: { clients_affected_pct: 10 }, met: null },
  { name: "counterparts above 30 %", criteria: { financial_counterparts_affected_pct: 30.5 }, met: "clients" },
  { name: "counterparts exactly 30 %", criteria: { financial_counterparts_affected_pct: 30 }, met: null },
  { name: "transactions above 10 %", criteria: { transactions_affected_pct: 11 }, met: "clients" },
  { name: "transactions exactly 10 %", criteria: { transactions_affected_pct: 10 }, met: null },
  { name: "transaction value above 10 %", criteria: { transactions_value_affected_pct: 10.5 }, met: "clients" },
  { name: "transaction value exactly 10 %", criteria: { transactions_value_affected_pct: 10 }, met: null },
  { name: "relevant clients", criteria: { relevant_clients_affected: true }, met: "clients" },
  { name: "relevant clients false", criteria: { relevant_clients_affected: false }, met: null },
  { name: "more than 100,000 clients", criteria: {}, facts: { clients_affected_count: 100_001, geographic_scope: [] }, met: "clients" },
  { name: "exactly 100,000 clients", criteria: {}, facts: { clients_affected_count: 100_000, geographic_scope: [] }, met: null },
  { name: "reputational", criteria: { reputational_impact: true }, met: "reputational" },
  { name: "duration above 24 h", criteria: { duration_hours: 24.01 }, met: "duration" },
  { name: "duration exactly 24 h", criteria: { duration_hours: 24 }, met: null },
  { name: "downtime above 2 h", criteria: { service_downtime_hours: 2.5 }, met: "duration" },
  { name: "downtime exactly 2 h", criteria: { service_downtime_hours: 2 }, met: null },
  { name: "two member states", criteria: { member_states_affected: ["DE", "fr"] }, met: "geographical" },
  { name: "one member state twice", criteria: { member_states_affected: ["DE", "de"] }, met: null },
  { name: "an EU state and a non-EU state", criteria: { member_states_affected: ["DE", "CH", "GB", "EL"] }, met: null },
  { name: "geographic scope stands in", criteria: {}, facts: { clients_affected_count: 0, geographic_scope: ["IT", "ES"] }, met: "geographical" },
  { name: "member states win over the scope", criteria: { member_states_affected: ["IT"] }, facts: { clients_affected_count: 0, geographic_scope: ["IT", "ES"] }, met: null },
  { name: "data losses (9(5)(a))", criteria: { data_loss_adverse_impact: true }, met: "data_losses" },
  { name: "economic above EUR 100,000", criteria: { economic_impact_eur: 100_000.01 }, met: "economic" },
  { name: "economic exactly EUR 100,000", criteria: { economic_impact_eur: 100_000 }, met: null }
]

/** Criteria meeting one threshold each, for the pairs. */
const meeting: Record<string, CriteriaInput> = {
  clients: { clients_affected_pct: 50 },
  reputational: { reputational_impact: true },
  duration: { duration_hours: 48 },
  geographical: { member_states_affected: ["AT", "BE"] },
  data_losses: { data_loss_adverse_impact: true },
  economic: { economic_impact_eur: 2_000_000 }
}

describe("major-incident rule: thresholds one by one behind the gate", () => {
  it.each(single)("$name", ({ criteria, facts, met }) => {
    const assessment = assessMajor({ ...gate, ...criteria }, facts ?? noFacts)
    expect(assessment.critical_services_affected).toBe(true)
    expect(assessment.thresholds_met).toEqual(met === null ? [] : [met])
    // One threshold is never enough without 9(5)(b).
    expect(assessment.major).toBe(false)
  })
})

describe("major-incident rule: pairs, the malicious path and the gate", () => {
  const names = Object.keys(meeting)
  const pairs = names.flatMap((a, i) => names.slice(i + 1).map((b) => [a, b] as const))

  it.each(pairs)("%s + %s with critical services → major", (a, b) => {
    const assessment = assessMajor({ ...gate, ...meeting[a], ...meeting[b] }, noFacts)
    expect([...assessment.thresholds_met].sort()).toEqual([a, b].sort())
    expect(assessment.major).toBe(true)
  })

  it.each(pairs)("%s + %s without critical services → not major", (a, b) => {
    const assessment = assessMajor({ critical_services_affected: false, ...meeting[a], ...meeting[b] }, noFacts)
    expect(assessment.thresholds_met).toHaveLength(2)
    expect(assessment.critical_services_affected).toBe(false)
    expect(assessment.major).toBe(false)
  })

  it("a successful malicious unauthorised access alone is major: it is 9(5)(b) and satisfies the gate", () => {
    const assessment = assessMajor({ malicious_unauthorised_access: true }, noFacts)
    expect(assessment).toMatchObject({ critical_services_affected: true, thresholds_met: ["data_losses"], major: true })
    expect(assessmentOf({ malicious_unauthorised_access: true, critical_services_affected: false }).major).toBe(true)
  })

  it("the gate off with every threshold met is not major", () => {
    const all: CriteriaInput = Object.assign({}, ...Object.values(meeting))
    const assessment = assessMajor({ ...all, critical_services_affected: false, relevant_clients_affected: true }, { clients_affected_count: 5_000_000, geographic_scope: [] })
    expect(assessment.thresholds_met).toEqual([...RtsThresholds])
    expect(assessment.major).toBe(false)
    expect(assessMajor(all, noFacts).major).toBe(false)
  })

  it("lists every absent criteria field as missing, in the table's order; the scope fills member states", () => {
    expect(assessMajor({}, noFacts).missing).toEqual([...CRITERIA_KEYS])
    expect(assessMajor({ reputational_impact: null, duration_hours: 3 }, noFacts).missing).toEqual(CRITERIA_KEYS.filter((key) => key !== "duration_hours"))
    expect(assessMajor({}, { clients_affected_count: 0, geographic_scope: ["FR"] }).missing).not.toContain("member_states_affected")
  })
})

const assessmentOf = (criteria: CriteriaInput) => assessMajor(criteria, noFacts)

/** The rule again, written as the regulation reads: Art. 8(1) over Art. 6 and Art. 9, counting instead of naming. */
const model = (c: CriteriaInput, facts: IncidentFacts): boolean => {
  const eu = "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE".split(" ")
  const states = c.member_states_affected ?? (facts.geographic_scope.length > 0 ? facts.geographic_scope : [])
  const distinctEu = new Set(states.map((s) => s.toUpperCase()).filter((s) => eu.includes(s))).size
  let count = 0
  if ((c.clients_affected_pct ?? 0) > 10 || (c.financial_counterparts_affected_pct ?? 0) > 30 || (c.transactions_affected_pct ?? 0) > 10) count++
  else if ((c.transactions_value_affected_pct ?? 0) > 10 || c.relevant_clients_affected === true || facts.clients_affected_count > 100_000) count++
  if (c.reputational_impact === true) count++
  if ((c.duration_hours ?? 0) > 24 || (c.service_downtime_hours ?? 0) > 2) count++
  if (distinctEu > 1) count++
  const maliciousAccess = c.malicious_unauthorised_access === true
  if (c.data_loss_adverse_impact === true || maliciousAccess) count++
  if ((c.economic_impact_eur ?? 0) > 100_000) count++
  if (maliciousAccess) return true
  return c.critical_services_affected === true && count >= 2
}

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 })
const pct = fc.oneof(fc.constantFrom(0, 10, 30, 10.000001, 30.000001, 100), fc.double({ min: 0, max: 100, noNaN: true }))
const hours = fc.oneof(fc.constantFrom(0, 2, 24, 2.0001, 24.0001), fc.double({ min: 0, max: 200, noNaN: true }))
const code = fc.constantFrom("DE", "fr", "IT", "CH", "GB", "EL", "GR", "us", "AT")
const criteria: fc.Arbitrary<CriteriaInput> = fc.record(
  {
    critical_services_affected: maybe(fc.boolean()),
    malicious_unauthorised_access: maybe(fc.boolean()),
    clients_affected_pct: maybe(pct),
    financial_counterparts_affected_pct: maybe(pct),
    transactions_affected_pct: maybe(pct),
    transactions_value_affected_pct: maybe(pct),
    relevant_clients_affected: maybe(fc.boolean()),
    reputational_impact: maybe(fc.boolean()),
    duration_hours: maybe(hours),
    service_downtime_hours: maybe(hours),
    member_states_affected: maybe(fc.array(code, { maxLength: 4 })),
    data_loss_adverse_impact: maybe(fc.boolean()),
    economic_impact_eur: maybe(fc.oneof(fc.constantFrom(100_000, 100_000.01), fc.double({ min: 0, max: 1e7, noNaN: true })))
  },
  { requiredKeys: [] }
)
const facts: fc.Arbitrary<IncidentFacts> = fc.record({
  clients_affected_count: fc.oneof(fc.constantFrom(100_000, 100_001), fc.nat({ max: 1_000_000 })),
  geographic_scope: fc.array(code, { maxLength: 3 })
})

describe("major-incident rule against a separate model", () => {
  it("agrees on major for any criteria and facts", () => {
    fc.assert(
      fc.property(criteria, facts, (c, f) => {
        expect(assessMajor(c, f).major).toBe(model(c, f))
      }),
      { numRuns: 2000 }
    )
  })

  it("thresholds are a duplicate-free subset in the fixed order; missing is exactly the absent fields", () => {
    fc.assert(
      fc.property(criteria, facts, (c, f) => {
        const a = assessMajor(c, f)
        expect(a.thresholds_met).toEqual(RtsThresholds.filter((name) => a.thresholds_met.includes(name)))
        const absent = CRITERIA_KEYS.filter((key) => c[key] === undefined || c[key] === null)
        expect(a.missing).toEqual(absent.filter((key) => !(key === "member_states_affected" && f.geographic_scope.length > 0)))
      })
    )
  })
})

describe("initial notification deadline", () => {
  const detected = "2026-05-01T00:00:00.000Z"
  it("is 4 hours after becoming major when that comes first", () => {
    expect(initialNotificationDue({ is_major: true, detected_at: detected, became_major_at: "2026-05-01T10:00:00.000Z" })).toBe("2026-05-01T14:00:00.000Z")
  })
  it("is 24 hours after detection when that comes first", () => {
    expect(initialNotificationDue({ is_major: true, detected_at: detected, became_major_at: "2026-05-01T22:30:00.000Z" })).toBe("2026-05-02T00:00:00.000Z")
  })
  it("is null for an incident that is not major", () => {
    expect(initialNotificationDue({ is_major: false, detected_at: detected, became_major_at: null })).toBeNull()
    expect(initialNotificationDue({ is_major: false, detected_at: detected, became_major_at: "2026-05-01T10:00:00.000Z" })).toBeNull()
  })
  it("is the minimum of the two for any times", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 86_400_000 }), fc.integer({ min: 0, max: 10 * 86_400_000 }), (d, b) => {
        const due = initialNotificationDue({ is_major: true, detected_at: new Date(d).toISOString(), became_major_at: new Date(d + b).toISOString() })
        expect(Date.parse(due!)).toBe(Math.min(d + b + 4 * 3_600_000, d + 24 * 3_600_000))
      })
    )
  })
})
