/** SQL for credentials and their status lists (the agent rows they describe are read, never written). */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Count, Json, JsonObject, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import { newId } from "../platform/ids.js"
import { emptyStatusList, STATUS_LIST_BITS } from "./status-list.js"

/** What a credential says about its agent. */
const SubjectRow = Schema.Struct({
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  name: Schema.String,
  capabilities: Json(Schema.Array(Schema.String)),
  metadata: JsonObject,
  current_version: Schema.NullOr(Schema.String)
})
export type SubjectRow = typeof SubjectRow.Type

const CredentialRow = Schema.Struct({
  vc_id: Schema.String,
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  version: Schema.Number,
  vc_json: JsonObject,
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

const NewCredential = Schema.Struct({
  vcId: Schema.String,
  slug: Schema.String,
  orgUuid: Schema.String,
  version: Schema.Number,
  vc: Schema.Record(Schema.String, Schema.Unknown),
  listId: Schema.String,
  index: Schema.Number,
  issuedAt: Schema.String,
  expiresAt: Schema.String
})
export type NewCredential = typeof NewCredential.Type

/** For a statement that always answers one row (an aggregate, INSERT … RETURNING): no row is a defect. */
const oneRow = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, Effect.die) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

export const makeCredentialsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const subject = Rows.findOneOption({
    Request: Schema.String,
    Result: SubjectRow,
    execute: (slug) => sql`SELECT agent_slug, org_uuid, name, capabilities, metadata, current_version FROM agents WHERE agent_slug = ${slug}`
  })

  const bySlug = Rows.findAll({
    Request: Schema.String,
    Result: CredentialRow,
    execute: (slug) => sql`SELECT * FROM agent_credentials WHERE agent_slug = ${slug} ORDER BY version DESC`
  })

  const byId = Rows.findOneOption({
    Request: Schema.String,
    Result: CredentialRow,
    execute: (vcId) => sql`SELECT * FROM agent_credentials WHERE vc_id = ${vcId}`
  })

  const statusList = Rows.findOneOption({
    Request: Schema.String,
    Result: StatusListRow,
    execute: (listId) => sql`SELECT list_id, bits, updated_at FROM credential_status_lists WHERE list_id = ${listId}`
  })

  /** Takes the next free bit of the oldest list with room. */
  const takeIndex = Rows.findOneOption({
    Request: Schema.Void,
    Result: Schema.Struct({ list_id: Schema.String, status_index: Count }),
    execute: () =>
      sql`UPDATE credential_status_lists SET next_index = next_index + 1
          WHERE list_id = (SELECT list_id FROM credential_status_lists WHERE next_index < ${STATUS_LIST_BITS} ORDER BY created_at, list_id LIMIT 1 FOR UPDATE)
          RETURNING list_id, next_index - 1 AS status_index`
  })

  /** A new list whose bit 0 is taken. */
  const insertList = Rows.void({
    Request: Schema.String,
    execute: (listId) => sql`INSERT INTO credential_status_lists (list_id, bits, next_index) VALUES (${listId}, ${emptyStatusList()}, 1)`
  })

  const insert = Rows.void({
    Request: NewCredential,
    execute: (c) =>
      sql`INSERT INTO agent_credentials (vc_id, agent_slug, org_uuid, version, vc_json, status_list_id, status_index, issued_at, expires_at)
          VALUES (${c.vcId}, ${c.slug}, ${c.orgUuid}, ${c.version}, ${jsonb(c.vc)}, ${c.listId}, ${c.index}, ${c.issuedAt}, ${c.expiresAt})`
  })

  const nextVersion = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ next: Count }),
    execute: (slug) => sql`SELECT COALESCE(max(version), 0) + 1 AS next FROM agent_credentials WHERE agent_slug = ${slug}`
  })

  /** Marks a credential revoked and sets its status bit, in one statement; the row when it was not yet revoked. */
  const revoke = Rows.findOneOption({
    Request: Schema.Struct({ vcId: Schema.String, reason: Schema.NullOr(Schema.String) }),
    Result: CredentialRow,
    execute: ({ vcId, reason }) =>
      sql`WITH revoked AS (
            UPDATE agent_credentials SET revoked_at = now(), revocation_reason = ${reason}
            WHERE vc_id = ${vcId} AND revoked_at IS NULL RETURNING *
          ), flipped AS (
            UPDATE credential_status_lists l SET bits = set_bit(l.bits, (SELECT (r.status_index & ~7) | (7 - (r.status_index & 7)) FROM revoked r), 1), updated_at = now()
            WHERE l.list_id = (SELECT status_list_id FROM revoked) RETURNING 1
          )
          SELECT revoked.*, (SELECT count(*) FROM flipped) AS flipped FROM revoked`
  })

  const unrevoked = Rows.findAll({
    Request: Schema.String,
    Result: Schema.Struct({ vc_id: Schema.String }),
    execute: (slug) => sql`SELECT vc_id FROM agent_credentials WHERE agent_slug = ${slug} AND revoked_at IS NULL`
  })

  return sqlDefects({
    sql,
    subject: (slug: string) => Effect.map(subject(slug), Option.getOrUndefined),
    bySlug,
    byId: (vcId: string) => Effect.map(byId(vcId), Option.getOrUndefined),
    statusList: (listId: string) => Effect.map(statusList(listId), Option.getOrUndefined),

    /** The next free bit of a list with room, a new list when all are full. */
    allocateIndex: Effect.gen(function* () {
      const taken = yield* takeIndex(undefined)
      if (Option.isSome(taken)) return { listId: taken.value.list_id, index: taken.value.status_index }
      const listId = newId("sl")
      yield* insertList(listId)
      return { listId, index: 0 }
    }),

    insert,

    nextVersion: (slug: string) => Effect.map(oneRow(nextVersion(slug)), (row) => row.next),

    revoke: (vcId: string, reason: string | null) => Effect.map(revoke({ vcId, reason }), Option.getOrUndefined),

    /** Every unrevoked credential of the agent (the one a reissue supersedes). */
    unrevoked: (slug: string) => Effect.map(unrevoked(slug), (rows) => rows.map((row) => row.vc_id)),

    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  })
})
