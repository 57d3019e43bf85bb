/**
 * Signed compliance documents verified in this browser, never by asking the server for a verdict:
 *
 * - A compliance report (CONTRACT "Signing (decided)"): Ed25519 by the JWKS key `signing_key_id` over the
 *   JCS of the 12-key descriptor; the PDF's sha256 and length are the descriptor's `content_hash` and
 *   `pdf_size_bytes`; the RFC 3161 token's imprint is sha256 of the descriptor bytes. The portable
 *   verifier (protocol/verifier/compliance.ts) recomputes each of these from the report as the API
 *   shows it and the PDF bytes as downloaded.
 * - A DORA incident report: Ed25519 over the JCS of {incident_uuid, org_uuid, report_content_hash,
 *   report_pdf_size_bytes, report_signed_at}, and the PDF's sha256 and length.
 */
import {
  canonicalBytes,
  decodeSignature,
  type Ed25519Jwk,
  type ReportCheck,
  rawPublicKey,
  sha256Tagged,
  verifyEd25519,
  verifyReportDescriptor
} from "../../../../protocol/verifier/index.ts"
import { getJwks } from "../../api.ts"
import type { ComplianceReport, Incident } from "./api.ts"

export interface Check {
  readonly name: string
  readonly passed: boolean
  /** What was checked, or why it failed. */
  readonly detail: string
}

export interface Verdict {
  readonly verified: boolean
  readonly checks: ReadonlyArray<Check>
}

const publishedKeys = async (): Promise<ReadonlyArray<Ed25519Jwk>> => (await getJwks()).keys as unknown as ReadonlyArray<Ed25519Jwk>

const asCheck = (name: string, check: ReportCheck | undefined, passed: string): Check | undefined =>
  check === undefined ? undefined : check === true ? { name, passed: true, detail: passed } : { name, passed: false, detail: check }

/** The checks of a report as shown by the API, with the PDF bytes as downloaded. */
export const checkReport = (report: ComplianceReport, pdf: Uint8Array, keys: ReadonlyArray<Ed25519Jwk>): Verdict => {
  const result = verifyReportDescriptor(
    {
      descriptor: report as unknown as Record<string, unknown>,
      signature: report.signature,
      signing_key_id: report.signing_key_id,
      timestamp_token: report.timestamp_token
    },
    keys,
    pdf
  )
  const { checks } = result
  const all = [
    asCheck("Signing key", checks.key_known, `Key ${String(report.signing_key_id)} is published in this gateway's JWKS.`),
    asCheck("PDF content hash", checks.content_hash_matches, `sha256 of the ${pdf.length} downloaded bytes is ${String(report.content_hash)}.`),
    asCheck("Signature", checks.signature_valid, "Ed25519 over the canonical (RFC 8785) 12-field descriptor."),
    asCheck("Timestamp", checks.timestamp_token_matches, "The RFC 3161 token's message imprint is sha256 of the descriptor.") ?? {
      name: "Timestamp",
      passed: true,
      detail: "The report carries no RFC 3161 timestamp token (nothing to check)."
    }
  ].filter((check): check is Check => check !== undefined)
  return { verified: result.valid, checks: all }
}

/** Downloads nothing itself: `pdf` is the bytes the user's download got. */
export const verifyReport = async (report: ComplianceReport, pdf: Uint8Array): Promise<Verdict> => checkReport(report, pdf, await publishedKeys())

/** The checks of a DORA incident report: its key, the PDF's hash and size, the signature over the 5-key record. */
export const checkIncidentReport = (incident: Incident, pdf: Uint8Array, keys: ReadonlyArray<Ed25519Jwk>): Verdict => {
  const checks: Array<Check> = []
  const kid = incident.report_signing_key_id
  const jwk = kid === null ? undefined : keys.find((key) => key.kid === kid)
  let raw: Uint8Array | undefined
  if (jwk === undefined) checks.push({ name: "Signing key", passed: false, detail: kid === null ? "The incident names no signing key." : `Key ${kid} is not published by this gateway.` })
  else {
    try {
      raw = rawPublicKey(jwk)
      checks.push({ name: "Signing key", passed: true, detail: `Key ${kid} is published in this gateway's JWKS.` })
    } catch (cause) {
      checks.push({ name: "Signing key", passed: false, detail: `Key ${kid} is unusable: ${cause instanceof Error ? cause.message : String(cause)}` })
    }
  }
  const computed = sha256Tagged(pdf)
  checks.push(
    computed !== incident.report_content_hash
      ? { name: "PDF content hash", passed: false, detail: `The PDF hashes to ${computed}, the incident says ${String(incident.report_content_hash)}.` }
      : pdf.length !== incident.report_pdf_size_bytes
        ? { name: "PDF content hash", passed: false, detail: `The PDF has ${pdf.length} bytes, the incident says ${String(incident.report_pdf_size_bytes)}.` }
        : { name: "PDF content hash", passed: true, detail: `sha256 of the ${pdf.length} downloaded bytes is ${computed}.` }
  )
  const signed = canonicalBytes({
    incident_uuid: incident.uuid,
    org_uuid: incident.org_uuid,
    report_content_hash: incident.report_content_hash,
    report_pdf_size_bytes: incident.report_pdf_size_bytes,
    report_signed_at: incident.report_signed_at
  })
  let signature: Check
  if (raw === undefined) signature = { name: "Signature", passed: false, detail: "Not checked: no usable key." }
  else {
    try {
      signature = verifyEd25519(decodeSignature(String(incident.report_signature)), signed, raw)
        ? { name: "Signature", passed: true, detail: "Ed25519 over the canonical {incident_uuid, org_uuid, report_content_hash, report_pdf_size_bytes, report_signed_at}." }
        : { name: "Signature", passed: false, detail: "The signature does not match the signed record." }
    } catch (cause) {
      signature = { name: "Signature", passed: false, detail: `Malformed signature: ${cause instanceof Error ? cause.message : String(cause)}` }
    }
  }
  checks.push(signature)
  return { verified: checks.every((check) => check.passed), checks }
}

export const verifyIncidentReport = async (incident: Incident, pdf: Uint8Array): Promise<Verdict> => checkIncidentReport(incident, pdf, await publishedKeys())
