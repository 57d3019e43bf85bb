/** SQL for credentials and their status lists (the agent rows they describe are read, never written). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Json, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import { newId } from "../platform/ids.js"
import { emptyStatusList, STATUS_LIST_BITS } from "./status-list.js"

/** What a credential says about its agent. */
const SubjectRow = Schema.Struct({
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  name: Schema.String,
  capabilities: Json(Schema.Array(Schema.String), []),
  metadata: Json(Schema.Record(Schema.String, Schema.Unknown), {}),
  current_version: Schema.NullOr(Schema.String)
})
export type SubjectRow = typeof SubjectRow.Type

const CredentialRow = Schema.Struct({
  vc_id: Schema.String,
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  version: Schema.Number,
  vc_json: Json(Schema.Record(Schema.String, Schema.Unknown), {}),
  status_list_id: Schema.String,
  status_index: Schema.Number,
  issued_at: Timestamp,
  expires_at: Timestamp,
  revoked_at: NullableTimestamp,
  revocation_reason: Schema.NullOr(Schema.String)
})
export type CredentialRow = typeof CredentialRow.Type

const StatusListRow = Schema.Struct({ list_id: Schema.String, bits: Schema.Uint8Array, updated_at: Timestamp })
export type StatusListRow = typeof StatusListRow.Type

export interface NewCredential {
  readonly vcId: string
  readonly slug: string
  readonly orgUuid: string
  readonly version: number
  readonly vc: Record<string, unknown>
  readonly listId: string
  readonly index: number
  readonly issuedAt: string
  readonly expiresAt: string
}

export const makeCredentialsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const subject = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: SubjectRow,
    execute: (slug) => sql`SELECT agent_slug, org_uuid, name, capabilities, metadata, current_version FROM agents WHERE agent_slug = ${slug}`
  })

  const bySlug = SqlSchema.findAll({
    Request: Schema.String,
    Result: CredentialRow,
    execute: (slug) => sql`SELECT * FROM agent_credentials WHERE agent_slug = ${slug} ORDER BY version DESC`
  })

  const byId = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: CredentialRow,
    execute: (vcId) => sql`SELECT * FROM agent_credentials WHERE vc_id = ${vcId}`
  })

  const statusList = SqlSchema.findOneOption({
    Request: Schema.String,
    Result: StatusListRow,
    execute: (listId) => sql`SELECT list_id, bits, updated_at FROM credential_status_lists WHERE list_id = ${listId}`
  })

  const takeIndex = sql`UPDATE credential_status_lists SET next_index = next_index + 1
      WHERE list_id = (SELECT list_id FROM credential_status_lists WHERE next_index < ${STATUS_LIST_BITS} ORDER BY created_at, list_id LIMIT 1 FOR UPDATE)
      RETURNING list_id, next_index - 1 AS status_index`

  /** Marks a credential revoked and sets its status bit, in one statement; the row when it was not yet revoked. */
  const revokeRow = (vcId: string, reason: string) =>
    sql`WITH revoked AS (
          UPDATE agent_credentials SET revoked_at = now(), revocation_reason = ${reason}
          WHERE vc_id = ${vcId} AND revoked_at IS NULL RETURNING *
        ), flipped AS (
          UPDATE credential_status_lists l SET bits = set_bit(l.bits, (SELECT (r.status_index & ~7) | (7 - (r.status_index & 7)) FROM revoked r), 1), updated_at = now()
          WHERE l.list_id = (SELECT status_list_id FROM revoked) RETURNING 1
        )
        SELECT revoked.*, (SELECT count(*) FROM flipped) AS flipped FROM revoked`.pipe(
      Effect.flatMap((rows) => (rows.length === 0 ? Effect.succeed(undefined) : Schema.decodeUnknownEffect(CredentialRow)(rows[0])))
    )

  return {
    sql,
    subject: (slug: string) => Effect.map(subject(slug), Option.getOrUndefined),
    bySlug,
    byId: (vcId: string) => Effect.map(byId(vcId), Option.getOrUndefined),
    statusList: (listId: string) => Effect.map(statusList(listId), Option.getOrUndefined),

    /** The next free bit of a list with room, a new list when all are full. */
    allocateIndex: Effect.gen(function* () {
      const taken = (yield* takeIndex) as ReadonlyArray<{ list_id: string; status_index: number }>
      if (taken[0] !== undefined) return { listId: taken[0].list_id, index: Number(taken[0].status_index) }
      const listId = newId("sl")
      yield* sql`INSERT INTO credential_status_lists (list_id, bits, next_index) VALUES (${listId}, ${emptyStatusList()}, 1)`
      return { listId, index: 0 }
    }),

    insert: (c: NewCredential) =>
      sql`INSERT INTO agent_credentials (vc_id, agent_slug, org_uuid, version, vc_json, status_list_id, status_index, issued_at, expires_at)
          VALUES (${c.vcId}, ${c.slug}, ${c.orgUuid}, ${c.version}, ${jsonb(c.vc)}, ${c.listId}, ${c.index}, ${c.issuedAt}, ${c.expiresAt})`.pipe(Effect.asVoid),

    nextVersion: (slug: string) =>
      sql`SELECT COALESCE(max(version), 0) + 1 AS next FROM agent_credentials WHERE agent_slug = ${slug}`.pipe(
        Effect.map((rows: ReadonlyArray<any>) => Number(rows[0]?.next ?? 1))
      ),

    revoke: revokeRow,

    /** Every unrevoked credential of the agent (the one a reissue supersedes). */
    unrevoked: (slug: string) =>
      sql`SELECT vc_id FROM agent_credentials WHERE agent_slug = ${slug} AND revoked_at IS NULL`.pipe(
        Effect.map((rows: ReadonlyArray<any>) => rows.map((row) => String(row.vc_id)))
      ),

    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  }
})
