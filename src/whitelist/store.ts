/** SQL for whitelist entries, endpoint approval requests and the per-org mode. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { EndpointApproval, WhitelistEntry } from "../../protocol/whitelist.js"
import { NullableTimestamp, Timestamp } from "../platform/columns.js"

export type WhitelistMode = "strict" | "permissive"

/** The wire entry, its timestamp decoded from the column. */
export const EntryRow = Schema.Struct({ ...WhitelistEntry.fields, created_at: Timestamp })
export type EntryRow = typeof EntryRow.Type

export const ApprovalRow = Schema.Struct({
  ...EndpointApproval.fields,
  requested_at: Timestamp,
  resolved_at: NullableTimestamp,
  grant_expires_at: NullableTimestamp,
  grant_used_at: NullableTimestamp
})
export type ApprovalRow = typeof ApprovalRow.Type

const OrgRow = Schema.Struct({ orgUuid: Schema.String, id: Schema.String })

export const makeWhitelistStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const entriesOf = (approvedOnly: boolean) =>
    SqlSchema.findAll({
      Request: Schema.String,
      Result: EntryRow,
      execute: (orgUuid) =>
        approvedOnly
          ? sql`SELECT * FROM endpoint_whitelist WHERE org_uuid = ${orgUuid} AND status = 'approved'`
          : sql`SELECT * FROM endpoint_whitelist WHERE org_uuid = ${orgUuid} ORDER BY created_at, id`
    })
  const insertEntry = SqlSchema.findOne({
    Request: Schema.Struct({
      id: Schema.String,
      orgUuid: Schema.String,
      urlPattern: Schema.String,
      name: Schema.String,
      status: Schema.String,
      tlsFingerprint: Schema.NullOr(Schema.String),
      createdBy: Schema.String
    }),
    Result: EntryRow,
    execute: (entry) =>
      sql`INSERT INTO endpoint_whitelist (id, org_uuid, url_pattern, name, status, tls_fingerprint, created_by)
          VALUES (${entry.id}, ${entry.orgUuid}, ${entry.urlPattern}, ${entry.name}, ${entry.status}, ${entry.tlsFingerprint}, ${entry.createdBy})
          RETURNING *`
  })
  const setEntryStatus = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String, status: Schema.String }),
    Result: EntryRow,
    execute: ({ orgUuid, id, status }) =>
      sql`UPDATE endpoint_whitelist SET status = ${status}, updated_at = now() WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING *`
  })
  const approvals = SqlSchema.findAll({
    Request: Schema.String,
    Result: ApprovalRow,
    execute: (orgUuid) => sql`SELECT * FROM endpoint_approvals WHERE org_uuid = ${orgUuid} ORDER BY requested_at DESC, id LIMIT 500`
  })
  const findApproval = SqlSchema.findOneOption({
    Request: OrgRow,
    Result: ApprovalRow,
    execute: ({ orgUuid, id }) => sql`SELECT * FROM endpoint_approvals WHERE id = ${id} AND org_uuid = ${orgUuid}`
  })
  const resolveApproval = SqlSchema.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String, status: Schema.String, by: Schema.String, grantMs: Schema.Number }),
    Result: ApprovalRow,
    // An approval opens its single-use grant (a request without an action type grants nothing).
    execute: ({ orgUuid, id, status, by, grantMs }) =>
      sql`UPDATE endpoint_approvals SET status = ${status}, resolved_at = now(), resolved_by = ${by},
            grant_expires_at = CASE WHEN ${status} = 'approved' AND action_type IS NOT NULL THEN now() + ${grantMs} * interval '1 millisecond' END
          WHERE id = ${id} AND org_uuid = ${orgUuid} AND status = 'pending' RETURNING *`
  })
  /** Spends one open grant for exactly this request; the id of the approval it came from, if any. */
  const spendGrant = (grant: { orgUuid: string; url: string; agentId: string | null; actionType: string }) =>
    sql<{ id: string }>`UPDATE endpoint_approvals SET grant_used_at = now()
        WHERE id = (
          SELECT id FROM endpoint_approvals
          WHERE org_uuid = ${grant.orgUuid} AND url = ${grant.url} AND agent_id IS NOT DISTINCT FROM ${grant.agentId}
            AND action_type = ${grant.actionType} AND status = 'approved' AND grant_used_at IS NULL AND grant_expires_at > now()
          ORDER BY resolved_at LIMIT 1 FOR UPDATE SKIP LOCKED
        ) AND grant_used_at IS NULL
        RETURNING id`.pipe(Effect.map((rows) => rows[0]?.id))
  return {
    sql,
    entries: entriesOf(false),
    approvedEntries: entriesOf(true),
    insertEntry,
    setEntryStatus: (orgUuid: string, id: string, status: string) =>
      Effect.map(setEntryStatus({ orgUuid, id, status }), Option.getOrUndefined),
    deleteEntry: (orgUuid: string, id: string) =>
      sql`DELETE FROM endpoint_whitelist WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
    approvals,
    findApproval: (orgUuid: string, id: string) => Effect.map(findApproval({ orgUuid, id }), Option.getOrUndefined),
    insertApproval: (approval: { id: string; orgUuid: string; url: string; agentId: string | null; actionType: string; suggested: string }) =>
      sql`INSERT INTO endpoint_approvals (id, org_uuid, url, agent_id, action_type, url_pattern_suggested)
          VALUES (${approval.id}, ${approval.orgUuid}, ${approval.url}, ${approval.agentId}, ${approval.actionType}, ${approval.suggested})`.pipe(Effect.asVoid),
    resolveApproval: (orgUuid: string, id: string, status: string, by: string, grantMs: number) =>
      Effect.map(resolveApproval({ orgUuid, id, status, by, grantMs }), Option.getOrUndefined),
    spendGrant,
    mode: (orgUuid: string) =>
      sql`SELECT mode FROM whitelist_settings WHERE org_uuid = ${orgUuid}`.pipe(
        Effect.map((rows): WhitelistMode => (rows[0]?.mode === "strict" ? "strict" : "permissive"))
      ),
    setMode: (orgUuid: string, mode: WhitelistMode) =>
      sql`INSERT INTO whitelist_settings (org_uuid, mode) VALUES (${orgUuid}, ${mode})
          ON CONFLICT (org_uuid) DO UPDATE SET mode = EXCLUDED.mode, updated_at = now()`.pipe(Effect.asVoid)
  }
})
