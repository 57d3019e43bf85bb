/** SQL for whitelist entries, endpoint approval requests and the per-org mode. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { EndpointApproval, WhitelistEntry, WhitelistModes } from "../../protocol/whitelist.js"
import { NullableTimestamp, Timestamp } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

export type WhitelistMode = (typeof WhitelistModes)[number]

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
const IdRow = Schema.Struct({ id: Schema.String })
const Resolution = Schema.Literals(["approved", "rejected"])

const ENTRY_COLUMNS = "id, url_pattern, name, status, tls_fingerprint, created_by, created_at"
const APPROVAL_COLUMNS = "id, url, agent_id, url_pattern_suggested, status, requested_at, resolved_at, action_type, grant_expires_at, grant_used_at"

export interface NewEntry {
  readonly id: string
  readonly orgUuid: string
  readonly urlPattern: string
  readonly name: string
  readonly status: "approved" | "pending"
  readonly tlsFingerprint: string | null
  readonly createdBy: string
}

export interface NewApproval {
  readonly id: string
  readonly orgUuid: string
  readonly url: string
  readonly agentId: string | null
  readonly actionType: string
  readonly suggested: string
}

/** What a grant is spent for: exactly this agent, action type and URL. */
export interface GrantRequest {
  readonly orgUuid: string
  readonly url: string
  readonly agentId: string | null
  readonly actionType: string
}

export interface WhitelistStoreShape {
  /** The organization's entries, oldest first. */
  readonly entries: (orgUuid: string) => Effect.Effect<ReadonlyArray<EntryRow>>
  readonly approvedEntries: (orgUuid: string) => Effect.Effect<ReadonlyArray<EntryRow>>
  readonly insertEntry: (entry: NewEntry) => Effect.Effect<EntryRow>
  readonly setEntryStatus: (orgUuid: string, id: string, status: "approved" | "rejected") => Effect.Effect<EntryRow | undefined>
  /** True when something was deleted. */
  readonly deleteEntry: (orgUuid: string, id: string) => Effect.Effect<boolean>
  /** The newest 500 requests. */
  readonly approvals: (orgUuid: string) => Effect.Effect<ReadonlyArray<ApprovalRow>>
  readonly findApproval: (orgUuid: string, id: string) => Effect.Effect<ApprovalRow | undefined>
  readonly insertApproval: (approval: NewApproval) => Effect.Effect<void>
  /** Undefined when the request is no longer pending (another resolution won). An approval opens a grant of `grantMs`. */
  readonly resolveApproval: (orgUuid: string, id: string, status: "approved" | "rejected", by: string, grantMs: number) => Effect.Effect<ApprovalRow | undefined>
  /** Spends one open grant for exactly this request; the id of the approval it came from, if any. */
  readonly spendGrant: (grant: GrantRequest) => Effect.Effect<string | undefined>
  /** Permissive until the organization chooses. */
  readonly mode: (orgUuid: string) => Effect.Effect<WhitelistMode>
  readonly setMode: (orgUuid: string, mode: WhitelistMode) => Effect.Effect<void>
  /** Runs `effect` in one transaction: its writes commit together or not at all. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const makeWhitelistStore: Effect.Effect<WhitelistStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const entryColumns = sql.literal(ENTRY_COLUMNS)
  const approvalColumns = sql.literal(APPROVAL_COLUMNS)

  const entriesOf = (approvedOnly: boolean) =>
    Rows.findAll({
      Request: Schema.String,
      Result: EntryRow,
      execute: (orgUuid) =>
        approvedOnly
          ? sql`SELECT ${entryColumns} FROM endpoint_whitelist WHERE org_uuid = ${orgUuid} AND status = 'approved'`
          : sql`SELECT ${entryColumns} FROM endpoint_whitelist WHERE org_uuid = ${orgUuid} ORDER BY created_at, id`
    })
  const insertEntry = Rows.findOne({
    Request: Schema.Struct({
      id: Schema.String,
      orgUuid: Schema.String,
      urlPattern: Schema.String,
      name: Schema.String,
      status: Schema.Literals(["approved", "pending"]),
      tlsFingerprint: Schema.NullOr(Schema.String),
      createdBy: Schema.String
    }),
    Result: EntryRow,
    execute: (entry) =>
      sql`INSERT INTO endpoint_whitelist (id, org_uuid, url_pattern, name, status, tls_fingerprint, created_by)
          VALUES (${entry.id}, ${entry.orgUuid}, ${entry.urlPattern}, ${entry.name}, ${entry.status}, ${entry.tlsFingerprint}, ${entry.createdBy})
          RETURNING ${entryColumns}`
  })
  const setEntryStatus = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String, status: Resolution }),
    Result: EntryRow,
    execute: ({ orgUuid, id, status }) =>
      sql`UPDATE endpoint_whitelist SET status = ${status}, updated_at = now() WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING ${entryColumns}`
  })
  const deleteEntry = Rows.findAll({
    Request: OrgRow,
    Result: IdRow,
    execute: ({ orgUuid, id }) => sql`DELETE FROM endpoint_whitelist WHERE id = ${id} AND org_uuid = ${orgUuid} RETURNING id`
  })
  const approvals = Rows.findAll({
    Request: Schema.String,
    Result: ApprovalRow,
    execute: (orgUuid) => sql`SELECT ${approvalColumns} FROM endpoint_approvals WHERE org_uuid = ${orgUuid} ORDER BY requested_at DESC, id LIMIT 500`
  })
  const findApproval = Rows.findOneOption({
    Request: OrgRow,
    Result: ApprovalRow,
    execute: ({ orgUuid, id }) => sql`SELECT ${approvalColumns} FROM endpoint_approvals WHERE id = ${id} AND org_uuid = ${orgUuid}`
  })
  const insertApproval = Rows.void({
    Request: Schema.Struct({
      id: Schema.String,
      orgUuid: Schema.String,
      url: Schema.String,
      agentId: Schema.NullOr(Schema.String),
      actionType: Schema.String,
      suggested: Schema.String
    }),
    execute: (approval) =>
      sql`INSERT INTO endpoint_approvals (id, org_uuid, url, agent_id, action_type, url_pattern_suggested)
          VALUES (${approval.id}, ${approval.orgUuid}, ${approval.url}, ${approval.agentId}, ${approval.actionType}, ${approval.suggested})`
  })
  const resolveApproval = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, id: Schema.String, status: Resolution, by: Schema.String, grantMs: Schema.Number }),
    Result: ApprovalRow,
    // An approval opens its single-use grant (a request without an action type grants nothing).
    execute: ({ orgUuid, id, status, by, grantMs }) =>
      sql`UPDATE endpoint_approvals SET status = ${status}, resolved_at = now(), resolved_by = ${by},
            grant_expires_at = CASE WHEN ${status} = 'approved' AND action_type IS NOT NULL THEN now() + ${grantMs} * interval '1 millisecond' END
          WHERE id = ${id} AND org_uuid = ${orgUuid} AND status = 'pending' RETURNING ${approvalColumns}`
  })
  const spendGrant = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, url: Schema.String, agentId: Schema.NullOr(Schema.String), actionType: Schema.String }),
    Result: IdRow,
    execute: (grant) =>
      sql`UPDATE endpoint_approvals SET grant_used_at = now()
          WHERE id = (
            SELECT id FROM endpoint_approvals
            WHERE org_uuid = ${grant.orgUuid} AND url = ${grant.url} AND agent_id IS NOT DISTINCT FROM ${grant.agentId}
              AND action_type = ${grant.actionType} AND status = 'approved' AND grant_used_at IS NULL AND grant_expires_at > now()
            ORDER BY resolved_at LIMIT 1 FOR UPDATE SKIP LOCKED
          ) AND grant_used_at IS NULL
          RETURNING id`
  })
  const mode = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ mode: Schema.Literals(WhitelistModes) }),
    execute: (orgUuid) => sql`SELECT mode FROM whitelist_settings WHERE org_uuid = ${orgUuid}`
  })
  const setMode = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, mode: Schema.Literals(WhitelistModes) }),
    execute: ({ orgUuid, mode }) =>
      sql`INSERT INTO whitelist_settings (org_uuid, mode) VALUES (${orgUuid}, ${mode})
          ON CONFLICT (org_uuid) DO UPDATE SET mode = EXCLUDED.mode, updated_at = now()`
  })

  const methods = sqlDefects({
    entries: entriesOf(false),
    approvedEntries: entriesOf(true),
    // INSERT … RETURNING always answers the row it inserted.
    insertEntry: (entry: NewEntry) => Effect.catchTag(insertEntry(entry), "NoSuchElementError", Effect.die),
    setEntryStatus: (orgUuid: string, id: string, status: "approved" | "rejected") =>
      Effect.map(setEntryStatus({ orgUuid, id, status }), Option.getOrUndefined),
    deleteEntry: (orgUuid: string, id: string) => Effect.map(deleteEntry({ orgUuid, id }), (rows) => rows.length > 0),
    approvals,
    findApproval: (orgUuid: string, id: string) => Effect.map(findApproval({ orgUuid, id }), Option.getOrUndefined),
    insertApproval,
    resolveApproval: (orgUuid: string, id: string, status: "approved" | "rejected", by: string, grantMs: number) =>
      Effect.map(resolveApproval({ orgUuid, id, status, by, grantMs }), Option.getOrUndefined),
    spendGrant: (grant: GrantRequest) =>
      Effect.map(spendGrant(grant), (row) => Option.getOrUndefined(row)?.id),
    mode: (orgUuid: string) => Effect.map(mode(orgUuid), (row): WhitelistMode => (Option.isSome(row) ? row.value.mode : "permissive")),
    setMode: (orgUuid: string, value: WhitelistMode) => setMode({ orgUuid, mode: value })
  })
  return {
    ...methods,
    // Beginning or committing failed: the database's fault, as everywhere in the store.
    transaction: (effect) => Effect.catchTag(sql.withTransaction(effect), "SqlError", Effect.die)
  }
})

/** The whitelist's tables: `layer` on the database, `memoryWhitelistStore` (memory-store.ts) for tests of the service's rules. */
export class WhitelistStore extends Context.Service<WhitelistStore, WhitelistStoreShape>()("gateway/WhitelistStore") {
  static readonly layer = Layer.effect(WhitelistStore, makeWhitelistStore)
}
