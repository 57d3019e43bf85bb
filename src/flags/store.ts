/** SQL for feature flags and their organization lists. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import type { FeatureFlag } from "../../protocol/flags.js"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Timestamp } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

export interface NewFlag {
  readonly id: string
  readonly key: string
  readonly description: string | null
  readonly enabledGlobal: boolean
  readonly rolloutPercentage: number
  readonly orgIds: ReadonlyArray<string>
}

export interface FlagPatch {
  readonly description?: string | null | undefined
  readonly enabled_global?: boolean | undefined
  readonly rollout_percentage?: number | undefined
  readonly enabled_org_ids?: ReadonlyArray<string> | undefined
}

const FlagRow = Schema.Struct({
  id: Schema.String,
  key: Schema.String,
  description: Schema.NullOr(Schema.String),
  enabled_global: Schema.Boolean,
  rollout_percentage: Schema.Int,
  enabled_org_ids: Schema.Array(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
})

const Id = Schema.Struct({ id: Schema.String })

export interface FlagStoreShape {
  readonly audit: (entry: AuditEntry) => Effect.Effect<void>
  /** Every flag by key, each list in the order organizations were added. */
  readonly all: Effect.Effect<ReadonlyArray<FeatureFlag>>
  readonly find: (key: string) => Effect.Effect<FeatureFlag | undefined>
  /** The flag, or undefined when the key is taken. */
  readonly insert: (flag: NewFlag) => Effect.Effect<FeatureFlag | undefined>
  /** The flag after the patch, or undefined when it does not exist. */
  readonly update: (key: string, patch: FlagPatch) => Effect.Effect<FeatureFlag | undefined>
  /** Whether a flag was there to delete. */
  readonly remove: (key: string) => Effect.Effect<boolean>
  /** Adds or removes one organization; undefined when the flag does not exist. */
  readonly setOrg: (key: string, orgUuid: string, listed: boolean) => Effect.Effect<FeatureFlag | undefined>
}

export const makeFlagStore: Effect.Effect<FlagStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** Flags with their lists in the order organizations were added. */
  const selectFlags = (key: string | undefined) =>
    sql`SELECT f.id, f.key, f.description, f.enabled_global, f.rollout_percentage, f.created_at, f.updated_at, COALESCE(
          (SELECT array_agg(o.org_uuid ORDER BY o.added_at, o.org_uuid) FROM feature_flag_orgs o WHERE o.flag_id = f.id),
          '{}'::text[]) AS enabled_org_ids
        FROM feature_flags f ${key === undefined ? sql`` : sql`WHERE f.key = ${key}`}
        ORDER BY f.key`

  const all = Rows.findAll({ Request: Schema.Void, Result: FlagRow, execute: () => selectFlags(undefined) })
  const byKey = Rows.findOneOption({ Request: Schema.String, Result: FlagRow, execute: (key) => selectFlags(key) })
  const find = (key: string) => Effect.map(byKey(key), (row): FeatureFlag | undefined => Option.getOrUndefined(row))

  const insertFlag = Rows.findOneOption({
    Request: Schema.Struct({ id: Schema.String, key: Schema.String, description: Schema.NullOr(Schema.String), enabledGlobal: Schema.Boolean, rolloutPercentage: Schema.Number }),
    Result: Id,
    execute: (flag) =>
      sql`INSERT INTO feature_flags (id, key, description, enabled_global, rollout_percentage)
          VALUES (${flag.id}, ${flag.key}, ${flag.description}, ${flag.enabledGlobal}, ${flag.rolloutPercentage})
          ON CONFLICT (key) DO NOTHING RETURNING id`
  })
  const addOrg = Rows.void({
    Request: Schema.Struct({ flagId: Schema.String, orgUuid: Schema.String }),
    execute: ({ flagId, orgUuid }) => sql`INSERT INTO feature_flag_orgs (flag_id, org_uuid) VALUES (${flagId}, ${orgUuid}) ON CONFLICT DO NOTHING`
  })
  const removeOrg = Rows.void({
    Request: Schema.Struct({ flagId: Schema.String, orgUuid: Schema.String }),
    execute: ({ flagId, orgUuid }) => sql`DELETE FROM feature_flag_orgs WHERE flag_id = ${flagId} AND org_uuid = ${orgUuid}`
  })
  const clearOrgs = Rows.void({ Request: Schema.String, execute: (flagId) => sql`DELETE FROM feature_flag_orgs WHERE flag_id = ${flagId}` })
  const touch = Rows.findOneOption({
    Request: Schema.String,
    Result: Id,
    execute: (key) => sql`UPDATE feature_flags SET updated_at = now() WHERE key = ${key} RETURNING id`
  })
  const setDescription = Rows.void({
    Request: Schema.Struct({ id: Schema.String, value: Schema.NullOr(Schema.String) }),
    execute: ({ id, value }) => sql`UPDATE feature_flags SET description = ${value} WHERE id = ${id}`
  })
  const setGlobal = Rows.void({
    Request: Schema.Struct({ id: Schema.String, value: Schema.Boolean }),
    execute: ({ id, value }) => sql`UPDATE feature_flags SET enabled_global = ${value} WHERE id = ${id}`
  })
  const setRollout = Rows.void({
    Request: Schema.Struct({ id: Schema.String, value: Schema.Number }),
    execute: ({ id, value }) => sql`UPDATE feature_flags SET rollout_percentage = ${value} WHERE id = ${id}`
  })
  const deleteFlag = Rows.findOneOption({
    Request: Schema.String,
    Result: Id,
    execute: (key) => sql`DELETE FROM feature_flags WHERE key = ${key} RETURNING id`
  })

  const addOrgs = (flagId: string, orgIds: ReadonlyArray<string>) => Effect.forEach(orgIds, (orgUuid) => addOrg({ flagId, orgUuid }), { discard: true })
  const touched = (key: string) => Effect.map(touch(key), Option.getOrUndefined)

  return sqlDefects({
    audit: (entry: AuditEntry) => insertAudit(sql, entry),
    all: all(undefined),
    find,
    insert: (flag: NewFlag) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const inserted = yield* insertFlag(flag)
          if (Option.isNone(inserted)) return undefined
          yield* addOrgs(flag.id, flag.orgIds)
          return yield* find(flag.key)
        })
      ),
    update: (key: string, patch: FlagPatch) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const row = yield* touched(key)
          if (row === undefined) return undefined
          if (patch.description !== undefined) yield* setDescription({ id: row.id, value: patch.description })
          if (patch.enabled_global !== undefined) yield* setGlobal({ id: row.id, value: patch.enabled_global })
          if (patch.rollout_percentage !== undefined) yield* setRollout({ id: row.id, value: patch.rollout_percentage })
          if (patch.enabled_org_ids !== undefined) {
            yield* clearOrgs(row.id)
            yield* addOrgs(row.id, patch.enabled_org_ids)
          }
          return yield* find(key)
        })
      ),
    remove: (key: string) => Effect.map(deleteFlag(key), Option.isSome),
    setOrg: (key: string, orgUuid: string, listed: boolean) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const row = yield* touched(key)
          if (row === undefined) return undefined
          if (listed) yield* addOrg({ flagId: row.id, orgUuid })
          else yield* removeOrg({ flagId: row.id, orgUuid })
          return yield* find(key)
        })
      )
  })
})

/** The flags' tables: `layer` on the database, `memoryFlagStore` (memory-store.ts) for tests of the service's rules. */
export class FlagStore extends Context.Service<FlagStore, FlagStoreShape>()("gateway/FlagStore") {
  static readonly layer = Layer.effect(FlagStore, makeFlagStore)
}
