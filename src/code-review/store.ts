/**
 * SQL of code review: an organization's GitHub configuration and its repositories (one row per
 * repository under its lower-cased `owner/repo`, the key that keeps a repository in one
 * organization). Reviews and their violations are review-store.ts's.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { auditActor, insertAudit } from "../platform/audit.js"
import { Json, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

/** What `auto_merge` holds; absent keys read as the defaults. */
export const StoredAutoMerge = Schema.Struct({
  enabled: Schema.optionalKey(Schema.Boolean),
  mode: Schema.optionalKey(Schema.String),
  merge_method: Schema.optionalKey(Schema.String),
  vote_models: Schema.optionalKey(Schema.Array(Schema.String))
})
export type StoredAutoMerge = typeof StoredAutoMerge.Type

const ConfigRow = Schema.Struct({
  org_uuid: Schema.String,
  api_token_sealed: Schema.NullOr(Schema.String),
  webhook_secret_sealed: Schema.String,
  api_base_url: Schema.NullOr(Schema.String),
  auto_merge: Json(StoredAutoMerge),
  updated_at: Timestamp
})
export type ConfigRow = typeof ConfigRow.Type

/** The configuration as written: every column (the service merged what the request left out). */
export interface ConfigWrite {
  readonly orgUuid: string
  readonly apiTokenSealed: string | null
  readonly webhookSecretSealed: string
  readonly apiBaseUrl: string | null
  readonly autoMerge: StoredAutoMerge
}

/** Rolls the replacing transaction back, naming the repositories another organization holds. */
class Taken extends Data.TaggedError("Taken")<{ readonly repositories: ReadonlyArray<string> }> {}

export const makeCodeReviewStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const config = Rows.findOneOption({
    Request: Schema.String,
    Result: ConfigRow,
    execute: (orgUuid) =>
      sql`SELECT org_uuid, api_token_sealed, webhook_secret_sealed, api_base_url, auto_merge, updated_at FROM github_configs WHERE org_uuid = ${orgUuid}`
  })
  const repositories = Rows.findAll({
    Request: Schema.String,
    Result: Schema.Struct({ full_name: Schema.String }),
    execute: (orgUuid) => sql`SELECT full_name FROM github_repositories WHERE org_uuid = ${orgUuid} ORDER BY position`
  })
  const upsert = Rows.findOne({
    Request: Schema.Struct({
      orgUuid: Schema.String,
      apiTokenSealed: Schema.NullOr(Schema.String),
      webhookSecretSealed: Schema.String,
      apiBaseUrl: Schema.NullOr(Schema.String),
      autoMerge: StoredAutoMerge
    }),
    Result: ConfigRow,
    execute: (row) =>
      sql`INSERT INTO github_configs (org_uuid, api_token_sealed, webhook_secret_sealed, api_base_url, auto_merge, updated_at)
          VALUES (${row.orgUuid}, ${row.apiTokenSealed}, ${row.webhookSecretSealed}, ${row.apiBaseUrl}, ${jsonb(row.autoMerge)}, now())
          ON CONFLICT (org_uuid) DO UPDATE SET
            api_token_sealed = EXCLUDED.api_token_sealed,
            webhook_secret_sealed = EXCLUDED.webhook_secret_sealed,
            api_base_url = EXCLUDED.api_base_url,
            auto_merge = EXCLUDED.auto_merge,
            updated_at = now()
          RETURNING org_uuid, api_token_sealed, webhook_secret_sealed, api_base_url, auto_merge, updated_at`
  })
  const claim = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, key: Schema.String, fullName: Schema.String, position: Schema.Number }),
    Result: Schema.Struct({ repository_key: Schema.String }),
    execute: ({ orgUuid, key, fullName, position }) =>
      sql`INSERT INTO github_repositories (repository_key, org_uuid, full_name, position) VALUES (${key}, ${orgUuid}, ${fullName}, ${position})
          ON CONFLICT (repository_key) DO NOTHING RETURNING repository_key`
  })
  const connected = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, key: Schema.String }),
    Result: Schema.Struct({ org_uuid: Schema.String }),
    execute: ({ orgUuid, key }) => sql`SELECT org_uuid FROM github_repositories WHERE repository_key = ${key} AND org_uuid = ${orgUuid}`
  })

  /**
   * Writes the configuration and, when `names` is given, replaces the repositories, in one
   * transaction: the organization's rows go, then each name is claimed; a name another
   * organization holds (committed, or committing now: the insert waits for it) rolls it all back.
   */
  const replace = (row: ConfigWrite, names: ReadonlyArray<string> | undefined) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          // INSERT … RETURNING always answers the row.
          const written = yield* Effect.catchTag(upsert(row), "NoSuchElementError", Effect.die)
          if (names !== undefined) {
            yield* sql`DELETE FROM github_repositories WHERE org_uuid = ${row.orgUuid}`
            const taken: Array<string> = []
            for (const [position, fullName] of names.entries()) {
              const claimed = yield* claim({ orgUuid: row.orgUuid, key: fullName.toLowerCase(), fullName, position })
              if (Option.isNone(claimed)) taken.push(fullName)
            }
            if (taken.length > 0) return yield* Effect.fail(new Taken({ repositories: taken }))
          }
          return { written, taken: undefined as ReadonlyArray<string> | undefined }
        })
      )
      .pipe(Effect.catchTag("Taken", (error) => Effect.succeed({ written: undefined, taken: error.repositories })))

  return sqlDefects({
    config: (orgUuid: string) => Effect.map(config(orgUuid), Option.getOrUndefined),
    repositories: (orgUuid: string) => Effect.map(repositories(orgUuid), (rows) => rows.map((row) => row.full_name)),
    /** `{written}`, or `{taken}` (nothing changed) when another organization holds some of `names`. */
    replace,
    /** True when something was removed; the repositories go with the configuration. */
    remove: (orgUuid: string) =>
      Effect.map(sql<{ org_uuid: string }>`DELETE FROM github_configs WHERE org_uuid = ${orgUuid} RETURNING org_uuid`, (rows) => rows.length > 0),
    /** Whether `owner/repo` (any case) is one of the organization's repositories. */
    connected: (orgUuid: string, fullName: string) => Effect.map(connected({ orgUuid, key: fullName.toLowerCase() }), Option.isSome),
    /** The organization a repository (any case) belongs to, with its sealed webhook secret. */
    repositoryOwner: (fullName: string) =>
      Effect.map(
        sql<{ org_uuid: string; webhook_secret_sealed: string }>`
          SELECT c.org_uuid, c.webhook_secret_sealed FROM github_repositories r JOIN github_configs c ON c.org_uuid = r.org_uuid
          WHERE r.repository_key = ${fullName.toLowerCase()}`,
        (rows) => rows[0]
      ),
    audit: (principal: Principal, event: string, details: Record<string, unknown>, requestId: string | null) =>
      insertAudit(sql, { orgUuid: principal.orgUuid, actor: auditActor(principal), event, target: principal.orgUuid, details, requestId })
  })
})

export type CodeReviewStore = Effect.Success<typeof makeCodeReviewStore>
