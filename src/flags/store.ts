/** SQL for feature flags and their organization lists. */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import type { FeatureFlag } from "../../protocol/flags.js"
import { isoRequired } from "../platform/sql.js"

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

const toFlag = (row: Record<string, unknown>): FeatureFlag => ({
  id: row.id as string,
  key: row.key as string,
  description: (row.description as string | null) ?? null,
  enabled_global: row.enabled_global === true,
  rollout_percentage: Number(row.rollout_percentage),
  enabled_org_ids: Array.isArray(row.enabled_org_ids) ? (row.enabled_org_ids as Array<string>) : [],
  created_at: isoRequired(row.created_at),
  updated_at: isoRequired(row.updated_at)
})

export const makeFlagStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** Flags with their lists in the order organizations were added. */
  const select = (key: string | undefined) =>
    sql`SELECT f.*, COALESCE(
          (SELECT array_agg(o.org_uuid ORDER BY o.added_at, o.org_uuid) FROM feature_flag_orgs o WHERE o.flag_id = f.id),
          '{}'::text[]) AS enabled_org_ids
        FROM feature_flags f
        ${key === undefined ? sql`` : sql`WHERE f.key = ${key}`}
        ORDER BY f.key`.pipe(Effect.map((rows) => rows.map(toFlag)))

  const find = (key: string) => Effect.map(select(key), (flags) => flags[0])

  const addOrgs = (flagId: string, orgIds: ReadonlyArray<string>) =>
    Effect.forEach(
      orgIds,
      (orgUuid) => sql`INSERT INTO feature_flag_orgs (flag_id, org_uuid) VALUES (${flagId}, ${orgUuid}) ON CONFLICT DO NOTHING`,
      { discard: true }
    )

  const touch = (key: string) => sql`UPDATE feature_flags SET updated_at = now() WHERE key = ${key} RETURNING id`.pipe(Effect.map((rows) => rows[0]?.id as string | undefined))

  return {
    sql,
    all: select(undefined),
    find,
    /** The flag, or undefined when the key is taken. */
    insert: (flag: NewFlag) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const inserted = yield* sql`INSERT INTO feature_flags (id, key, description, enabled_global, rollout_percentage)
            VALUES (${flag.id}, ${flag.key}, ${flag.description}, ${flag.enabledGlobal}, ${flag.rolloutPercentage})
            ON CONFLICT (key) DO NOTHING RETURNING id`
          if (inserted.length === 0) return undefined
          yield* addOrgs(flag.id, flag.orgIds)
          return yield* find(flag.key)
        })
      ),
    update: (key: string, patch: FlagPatch) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const id = yield* touch(key)
          if (id === undefined) return undefined
          if (patch.description !== undefined) yield* sql`UPDATE feature_flags SET description = ${patch.description} WHERE id = ${id}`
          if (patch.enabled_global !== undefined) yield* sql`UPDATE feature_flags SET enabled_global = ${patch.enabled_global} WHERE id = ${id}`
          if (patch.rollout_percentage !== undefined) yield* sql`UPDATE feature_flags SET rollout_percentage = ${patch.rollout_percentage} WHERE id = ${id}`
          if (patch.enabled_org_ids !== undefined) {
            yield* sql`DELETE FROM feature_flag_orgs WHERE flag_id = ${id}`
            yield* addOrgs(id, patch.enabled_org_ids)
          }
          return yield* find(key)
        })
      ),
    /** Whether a flag was there to delete. */
    remove: (key: string) => sql`DELETE FROM feature_flags WHERE key = ${key} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
    /** Adds or removes one organization; undefined when the flag does not exist. */
    setOrg: (key: string, orgUuid: string, listed: boolean) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const id = yield* touch(key)
          if (id === undefined) return undefined
          if (listed) yield* addOrgs(id, [orgUuid])
          else yield* sql`DELETE FROM feature_flag_orgs WHERE flag_id = ${id} AND org_uuid = ${orgUuid}`
          return yield* find(key)
        })
      )
  }
})
