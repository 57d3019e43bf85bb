/**
 * The major-incident rule of DORA (Regulation (EU) 2022/2554 Art. 18, Delegated Regulation (EU)
 * 2024/1772 Arts. 6, 8 and 9), pure: criteria in, assessment out.
 *
 * - Gate (Art. 6): critical services affected, or a successful malicious unauthorised access.
 * - Thresholds (Art. 9), each strictly "above": `clients` (clients > 10 %, financial counterparts
 *   > 30 %, transactions by number or value > 10 %, relevant clients, or more than 100,000 clients
 *   by the incident's count), `reputational`, `duration` (> 24 h, or downtime > 2 h),
 *   `geographical` (2 or more EU member states), `data_losses` (9(5)(a) adverse impact, or the
 *   9(5)(b) malicious access), `economic` (> EUR 100,000).
 * - Major (Art. 8(1)): malicious access, or the gate and at least two thresholds.
 */
import { CRITERIA_KEYS, type CriteriaInput, type RtsAssessment, type RtsThreshold } from "../../protocol/dora.js"

/** EU-27, ISO 3166-1 alpha-2 (Greece is GR, not the EU's own EL). */
export const EU_MEMBER_STATES: ReadonlySet<string> = new Set([
  "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE",
  "IT", "LV", "LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE"
])

export const CLIENTS_COUNT_THRESHOLD = 100_000
export const ECONOMIC_THRESHOLD_EUR = 100_000

/** What the rule reads from the incident besides its criteria. */
export interface IncidentFacts {
  readonly clients_affected_count: number
  readonly geographic_scope: ReadonlyArray<string>
}

const above = (value: number | null | undefined, limit: number) => value !== null && value !== undefined && value > limit

/** Distinct EU member states among codes (case-insensitive); anything else does not count. */
export const euMemberStates = (codes: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...new Set(codes.map((code) => code.trim().toUpperCase()).filter((code) => EU_MEMBER_STATES.has(code)))
]

export const assessMajor = (criteria: CriteriaInput, incident: IncidentFacts): RtsAssessment => {
  const given = (key: keyof CriteriaInput) => criteria[key] !== null && criteria[key] !== undefined
  const malicious = criteria.malicious_unauthorised_access === true
  const gate = criteria.critical_services_affected === true || malicious
  // The incident's geographic_scope stands in for member_states_affected when that is absent.
  const states = criteria.member_states_affected ?? (incident.geographic_scope.length > 0 ? incident.geographic_scope : null)
  const met: Record<RtsThreshold, boolean> = {
    clients:
      above(criteria.clients_affected_pct, 10) ||
      above(criteria.financial_counterparts_affected_pct, 30) ||
      above(criteria.transactions_affected_pct, 10) ||
      above(criteria.transactions_value_affected_pct, 10) ||
      criteria.relevant_clients_affected === true ||
      incident.clients_affected_count > CLIENTS_COUNT_THRESHOLD,
    reputational: criteria.reputational_impact === true,
    duration: above(criteria.duration_hours, 24) || above(criteria.service_downtime_hours, 2),
    geographical: states !== null && euMemberStates(states).length >= 2,
    data_losses: criteria.data_loss_adverse_impact === true || malicious,
    economic: above(criteria.economic_impact_eur, ECONOMIC_THRESHOLD_EUR)
  }
  const thresholds = (Object.keys(met) as Array<RtsThreshold>).filter((name) => met[name])
  const missing = CRITERIA_KEYS.filter((key) => !given(key) && !(key === "member_states_affected" && states !== null))
  return {
    critical_services_affected: gate,
    thresholds_met: thresholds,
    missing,
    major: malicious || (gate && thresholds.length >= 2)
  }
}
