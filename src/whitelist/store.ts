/** SQL for whitelist entries, endpoint approval requests and the per-org mode. */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { iso, isoRequired } from "../platform/sql.js"

export type WhitelistMode = "strict" | "permissive"

export interface EntryRow {
  readonly id: string
  readonly url_pattern: string
  readonly name: string
  readonly status: string
  readonly tls_fingerprint: string | null
  readonly created_by: string | null
  readonly created_at: string
}

export interface ApprovalRow {
  readonly id: string
  readonly url: string
  readonly agent_id: string | null
  readonly url_pattern_suggested: string
  readonly status: string
  readonly requested_at: string
  readonly resolved_at: string | null
}

const toEntry = (row: any): EntryRow => ({
  id: row.id,
  url_pattern: row.url_pattern,
  name: row.name,
  status: row.status,
  tls_fingerprint: row.tls_fingerprint ?? null,
  created_by: row.created_by ?? null,
  created_at: isoRequired(row.created_at)
})

const toApproval = (row: any): ApprovalRow => ({
  id: row.id,
  url: row.url,
  agent_id: row.agent_id ?? null,
  url_pattern_suggested: row.url_pattern_suggested,
  status: row.status,
  requested_at: isoRequired(row.requested_at),
  resolved_at: iso(row.resolved_at)
})

export const makeWhitelistStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    sql,
    entries: (orgUuid: string) =>
      sql`SELECT * FROM endpoint_whitelist WHERE org_uuid = ${orgUuid} ORDER BY created_at, id`.pipe(Effect.map((rows) => rows.map(toEntry))),
    approvedEntries: (orgUuid: string) =>
      sql`SELECT * FROM endpoint_whitelist WHERE org_uuid = ${orgUuid} AND status = 'approved'`.pipe(Effect.map((rows) => rows.map(toEntry))),
    insertEntry: (entry: { id: string; orgUuid: string; urlPattern: string; name: string; status: string; tlsFingerprint: string | null; createdBy: string }) =>
      sql`INSERT INTO endpoint_whitelist (id, org_uuid, url_pattern, name, status, tls_fingerprint, created_by)
          VALUES (${entry.id}, ${entry.orgUuid}, ${entry.urlPattern}, ${entry.name}, ${entry.status}, ${entry.tlsFingerprint}, ${entry.createdBy})
          RETURNING *`.pipe(Effect.map((rows) => toEntry(rows[0]))),
    setEntryStatus: (orgUuid: string, id: string, status: string) =>
      sql`UPDATE endpoint_whitelist SET status = ${status}, updated_at = now() WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING *`.pipe(
        Effect.map((rows) => (rows[0] ? toEntry(rows[0]) : undefined))
      ),
    deleteEntry: (orgUuid: string, id: string) =>
      sql`DELETE FROM endpoint_whitelist WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
    approvals: (orgUuid: string) =>
      sql`SELECT * FROM endpoint_approvals WHERE org_uuid = ${orgUuid} ORDER BY requested_at DESC, id LIMIT 500`.pipe(
        Effect.map((rows) => rows.map(toApproval))
      ),
    findApproval: (orgUuid: string, id: string) =>
      sql`SELECT * FROM endpoint_approvals WHERE id = ${id} AND org_uuid = ${orgUuid}`.pipe(
        Effect.map((rows) => (rows[0] ? toApproval(rows[0]) : undefined))
      ),
    insertApproval: (approval: { id: string; orgUuid: string; url: string; agentId: string | null; suggested: string }) =>
      sql`INSERT INTO endpoint_approvals (id, org_uuid, url, agent_id, url_pattern_suggested)
          VALUES (${approval.id}, ${approval.orgUuid}, ${approval.url}, ${approval.agentId}, ${approval.suggested})`.pipe(Effect.asVoid),
    resolveApproval: (orgUuid: string, id: string, status: string, by: string) =>
      sql`UPDATE endpoint_approvals SET status = ${status}, resolved_at = now(), resolved_by = ${by}
          WHERE id = ${id} AND org_uuid = ${orgUuid} AND status = 'pending' RETURNING *`.pipe(
        Effect.map((rows) => (rows[0] ? toApproval(rows[0]) : undefined))
      ),
    mode: (orgUuid: string) =>
      sql`SELECT mode FROM whitelist_settings WHERE org_uuid = ${orgUuid}`.pipe(
        Effect.map((rows): WhitelistMode => (rows[0]?.mode === "strict" ? "strict" : "permissive"))
      ),
    setMode: (orgUuid: string, mode: WhitelistMode) =>
      sql`INSERT INTO whitelist_settings (org_uuid, mode) VALUES (${orgUuid}, ${mode})
          ON CONFLICT (org_uuid) DO UPDATE SET mode = EXCLUDED.mode, updated_at = now()`.pipe(Effect.asVoid)
  }
})
