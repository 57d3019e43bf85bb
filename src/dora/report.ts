/**
 * The incident report's PDF model: the incident, the RTS criteria and which thresholds were met,
 * root cause, resolution, lessons and the related actions' receipts. The signature is over the
 * PDF's hash, so it is answered in the incident object, not printed in the PDF.
 */
import { CRITERIA_KEYS, type RtsThreshold } from "../../protocol/dora.js"
import type { PdfBlock, PdfDocumentModel } from "../platform/pdf.js"
import type { IncidentRecord, RelatedReceipt } from "./store.js"

const THRESHOLD_TEXT: Record<RtsThreshold, string> = {
  clients: "Clients, financial counterparts and transactions (Art. 9(1))",
  reputational: "Reputational impact (Art. 9(2))",
  duration: "Duration and service downtime (Art. 9(3))",
  geographical: "Geographical spread: two or more Member States (Art. 9(4))",
  data_losses: "Data losses (Art. 9(5))",
  economic: "Economic impact above EUR 100,000 (Art. 9(6))"
}

const list = (values: ReadonlyArray<string>) => (values.length === 0 ? null : values.join(", "))

const classificationText = (incident: IncidentRecord, notificationDue: string | null): string =>
  incident.is_major
    ? `Major ICT-related incident. Article 19 of Regulation (EU) 2022/2554 requires an initial notification to the competent authority within 4 hours of classification as major and no later than 24 hours after becoming aware of the incident${notificationDue === null ? "" : ` (due by ${notificationDue})`}, followed by intermediate and final reports. This service records the incident; it files nothing.`
    : "Not a major ICT-related incident: no Article 19 notification is due. The incident is recorded for the register of ICT-related incidents (Art. 17)."

export const incidentReportModel = (
  incident: IncidentRecord,
  notificationDue: string | null,
  receipts: ReadonlyArray<RelatedReceipt>,
  signedAt: string
): PdfDocumentModel => {
  const assessment = incident.rts_assessment
  const blocks: Array<PdfBlock> = [
    { kind: "heading", text: "Incident" },
    {
      kind: "fields",
      rows: [
        ["Incident", incident.uuid],
        ["Organization", incident.org_uuid],
        ["Status", incident.status],
        ["Severity", incident.severity],
        ["Category", incident.category],
        ["Detected at", incident.detected_at],
        ["Classified at", incident.classified_at],
        ["Resolved at", incident.resolved_at],
        ["Clients affected", incident.clients_affected_count],
        ["Affected services", list(incident.affected_services)],
        ["Geographic scope", list(incident.geographic_scope)],
        ["ICT third party", incident.third_party_uuid]
      ]
    },
    { kind: "paragraph", text: incident.description },
    { kind: "heading", text: "Classification (Delegated Regulation (EU) 2024/1772)" },
    {
      kind: "fields",
      rows: [
        ["Major incident", incident.is_major],
        ["Classification basis", incident.classification_basis],
        ["Became major at", incident.became_major_at],
        ["Initial notification due", notificationDue]
      ]
    },
    { kind: "paragraph", text: classificationText(incident, notificationDue) }
  ]
  if (assessment === null) {
    blocks.push({ kind: "paragraph", text: "No RTS criteria were given; the classification rests on the basis above." })
  } else {
    blocks.push(
      { kind: "heading", text: "Criteria met" },
      {
        kind: "table",
        columns: ["Criterion", "Met"],
        rows: [
          ["Critical services affected (Art. 6)", assessment.critical_services_affected ? "yes" : "no"],
          ...(Object.keys(THRESHOLD_TEXT) as Array<RtsThreshold>).map((name) => [THRESHOLD_TEXT[name], assessment.thresholds_met.includes(name) ? "yes" : "no"])
        ]
      },
      { kind: "paragraph", text: `Thresholds met: ${list(assessment.thresholds_met) ?? "none"}. Not given (counted as not met): ${list(assessment.missing) ?? "none"}.` }
    )
  }
  if (incident.criteria !== null) {
    const criteria = incident.criteria
    blocks.push({
      kind: "fields",
      rows: CRITERIA_KEYS.map((key) => {
        const value = criteria[key]
        // Measured durations carry many decimals: two are enough to read (the data keeps them all).
        const shown = typeof value === "number" && !Number.isInteger(value) ? value.toFixed(2) : value
        return [key, Array.isArray(shown) ? list(shown) : (shown as string | number | boolean | null)] as const
      })
    })
  }
  blocks.push(
    { kind: "heading", text: "Root cause" },
    { kind: "fields", rows: [["Classification", incident.root_cause_classification]] },
    { kind: "paragraph", text: incident.root_cause_summary ?? "No root cause summary was given." },
    { kind: "heading", text: "Resolution" },
    { kind: "paragraph", text: incident.resolution_summary ?? "" },
    { kind: "heading", text: "Lessons learned" },
    { kind: "paragraph", text: incident.lessons_learned ?? "None recorded." },
    { kind: "heading", text: "Related actions and receipts" }
  )
  if (receipts.length === 0) blocks.push({ kind: "paragraph", text: "No related actions." })
  // One block per action: ids and hashes are too long for table columns.
  for (const r of receipts)
    blocks.push({
      kind: "fields",
      rows: [
        ["Action", `${r.action_uuid} (${r.action_type}, ${r.created_at})`],
        ["Receipt", r.receipt_uuid === null ? "none yet" : `${r.receipt_uuid} (${r.receipt_status})`],
        ["Payload hash", r.payload_hash]
      ]
    })
  blocks.push(
    {
      kind: "paragraph",
      text: "The sha256 of this file and its Ed25519 signature (receipt key, published at /api/v1/.well-known/jwks.json) are in the incident's report_content_hash and report_signature."
    }
  )
  return {
    title: "DORA ICT-related incident report",
    subtitle: incident.title,
    createdAt: new Date(signedAt),
    documentId: `dora-incident-${incident.uuid}`,
    blocks
  }
}
