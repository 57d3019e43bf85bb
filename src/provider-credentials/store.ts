/** SQL for provider credentials (sealed secrets; region and endpoint in clear). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const CredentialRow = Schema.Struct({
  slug: Schema.String,
  sealed: Schema.String,
  key_id: Schema.String,
  region: Schema.NullOr(Schema.String),
  endpoint: Schema.NullOr(Schema.String)
})
export type CredentialRow = typeof CredentialRow.Type

const OrgSlug = Schema.Struct({ orgUuid: Schema.String, slug: Schema.String })

export const makeProviderCredentialsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const all = Rows.findAll({
    Request: Schema.String,
    Result: CredentialRow,
    execute: (orgUuid) => sql`SELECT slug, sealed, key_id, region, endpoint FROM provider_credentials WHERE org_uuid = ${orgUuid}`
  })
  const lock = Rows.findOneOption({
    Request: OrgSlug,
    Result: CredentialRow,
    execute: ({ orgUuid, slug }) =>
      sql`SELECT slug, sealed, key_id, region, endpoint FROM provider_credentials WHERE org_uuid = ${orgUuid} AND slug = ${slug} FOR UPDATE`
  })
  const upsert = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, row: CredentialRow }),
    execute: ({ orgUuid, row }) =>
      sql`INSERT INTO provider_credentials (org_uuid, slug, sealed, key_id, region, endpoint)
          VALUES (${orgUuid}, ${row.slug}, ${row.sealed}, ${row.key_id}, ${row.region}, ${row.endpoint})
          ON CONFLICT (org_uuid, slug) DO UPDATE SET sealed = EXCLUDED.sealed, key_id = EXCLUDED.key_id, region = EXCLUDED.region,
            endpoint = EXCLUDED.endpoint, updated_at = now()`
  })
  const remove = Rows.findOneOption({
    Request: OrgSlug,
    Result: Schema.Struct({ slug: Schema.String }),
    execute: ({ orgUuid, slug }) => sql`DELETE FROM provider_credentials WHERE org_uuid = ${orgUuid} AND slug = ${slug} RETURNING slug`
  })

  return sqlDefects({
    sql,
    all,
    lock: (orgUuid: string, slug: string) => Effect.map(lock({ orgUuid, slug }), Option.getOrUndefined),
    upsert: (orgUuid: string, row: CredentialRow) => upsert({ orgUuid, row }),
    /** Whether there was a row to delete. */
    remove: (orgUuid: string, slug: string) => Effect.map(remove({ orgUuid, slug }), Option.isSome),
    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  })
})
