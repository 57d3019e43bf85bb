/**
 * Why an incident is (or is not) major, criterion by criterion, as the RTS rule reads them
 * (Delegated Regulation (EU) 2024/1772 Arts. 6, 8 and 9; CONTRACT "criteria object"). The verdict
 * shown is the server's (`rts_assessment`); these rows explain it, each value against its threshold.
 */
import type { Incident } from "./api.ts"

export const EU_MEMBER_STATES: ReadonlySet<string> = new Set(
  "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE".split(" ")
)

export const THRESHOLD_LABELS: Record<string, string> = {
  clients: "Clients, counterparts and transactions (Art. 9(1))",
  reputational: "Reputational impact (Art. 9(2))",
  duration: "Duration and service downtime (Art. 9(3))",
  geographical: "Geographical spread (Art. 9(4))",
  data_losses: "Data losses (Art. 9(5))",
  economic: "Economic impact (Art. 9(6))"
}

export interface CriterionRow {
  /** The criteria field (or incident field) this row reads. */
  readonly field: string
  readonly label: string
  /** The value as given, in words ("not given" when absent). */
  readonly value: string
  /** What makes it count. */
  readonly rule: string
  readonly met: boolean
}

export interface ThresholdGroup {
  readonly key: string
  readonly label: string
  readonly rows: ReadonlyArray<CriterionRow>
}

type Criteria = NonNullable<Incident["criteria"]>

const flag = (value: boolean | null): string => (value === null ? "not given" : value ? "yes" : "no")
const number = (value: number | null, unit: string): string => (value === null ? "not given" : `${value.toLocaleString("en")}${unit}`)
const above = (value: number | null, limit: number) => value !== null && value > limit

const boolRow = (field: keyof Criteria, label: string, value: boolean | null, rule = "yes"): CriterionRow => ({ field, label, value: flag(value), rule, met: value === true })
const aboveRow = (field: string, label: string, value: number | null, limit: number, unit: string): CriterionRow => ({
  field,
  label,
  value: number(value, unit),
  rule: `above ${limit.toLocaleString("en")}${unit}`,
  met: above(value, limit)
})

/** The Art. 6 gate's two criteria. */
export const gateRows = (criteria: Criteria): ReadonlyArray<CriterionRow> => [
  boolRow("critical_services_affected", "Critical or important functions, or authorised financial services, affected", criteria.critical_services_affected),
  boolRow("malicious_unauthorised_access", "Successful malicious unauthorised access (also meets data losses and makes the incident major by itself)", criteria.malicious_unauthorised_access)
]

/** The six thresholds of Art. 9, each with the criteria that can meet it. */
export const thresholdGroups = (criteria: Criteria, incident: Pick<Incident, "clients_affected_count" | "geographic_scope">): ReadonlyArray<ThresholdGroup> => {
  const fromScope = criteria.member_states_affected === null && incident.geographic_scope.length > 0
  const states = criteria.member_states_affected ?? (incident.geographic_scope.length > 0 ? incident.geographic_scope : null)
  const eu = states === null ? [] : [...new Set(states.map((code) => code.trim().toUpperCase()).filter((code) => EU_MEMBER_STATES.has(code)))]
  return [
    {
      key: "clients",
      label: THRESHOLD_LABELS.clients!,
      rows: [
        aboveRow("clients_affected_pct", "Clients of the affected service", criteria.clients_affected_pct, 10, " %"),
        aboveRow("financial_counterparts_affected_pct", "Financial counterparts", criteria.financial_counterparts_affected_pct, 30, " %"),
        aboveRow("transactions_affected_pct", "Transactions (number)", criteria.transactions_affected_pct, 10, " %"),
        aboveRow("transactions_value_affected_pct", "Transactions (value)", criteria.transactions_value_affected_pct, 10, " %"),
        boolRow("relevant_clients_affected", "Relevant clients or counterparts affected", criteria.relevant_clients_affected),
        aboveRow("clients_affected_count", "Clients affected (the incident's count)", incident.clients_affected_count, 100_000, "")
      ]
    },
    { key: "reputational", label: THRESHOLD_LABELS.reputational!, rows: [boolRow("reputational_impact", "Reputational impact", criteria.reputational_impact)] },
    {
      key: "duration",
      label: THRESHOLD_LABELS.duration!,
      rows: [
        aboveRow("duration_hours", "Duration", criteria.duration_hours, 24, " h"),
        aboveRow("service_downtime_hours", "Service downtime", criteria.service_downtime_hours, 2, " h")
      ]
    },
    {
      key: "geographical",
      label: THRESHOLD_LABELS.geographical!,
      rows: [
        {
          field: "member_states_affected",
          label: fromScope ? "EU member states affected (from the incident's geographic scope)" : "EU member states affected",
          value: states === null ? "not given" : `${states.join(", ") || "none"} (${eu.length} EU member state${eu.length === 1 ? "" : "s"})`,
          rule: "2 or more EU member states",
          met: eu.length >= 2
        }
      ]
    },
    {
      key: "data_losses",
      label: THRESHOLD_LABELS.data_losses!,
      rows: [
        boolRow("data_loss_adverse_impact", "Adverse impact on availability, authenticity, integrity or confidentiality of data (9(5)(a))", criteria.data_loss_adverse_impact),
        boolRow("malicious_unauthorised_access", "Successful malicious unauthorised access (9(5)(b))", criteria.malicious_unauthorised_access)
      ]
    },
    { key: "economic", label: THRESHOLD_LABELS.economic!, rows: [aboveRow("economic_impact_eur", "Costs and losses", criteria.economic_impact_eur, 100_000, " EUR")] }
  ]
}

/** The rule's conclusion in words, from the server's assessment. */
export const majorReason = (assessment: NonNullable<Incident["rts_assessment"]>, malicious: boolean): string => {
  const count = assessment.thresholds_met.length
  if (malicious) return "Major: a successful malicious unauthorised access is major by itself (Art. 8(1) with 9(5)(b))."
  if (!assessment.critical_services_affected) return `Not major: the Art. 6 gate is not met (no critical services affected), whatever the thresholds (${count} met).`
  return count >= 2
    ? `Major: critical services are affected and ${count} thresholds are met (two are needed).`
    : `Not major: critical services are affected but only ${count} threshold${count === 1 ? " is" : "s are"} met (two are needed).`
}
