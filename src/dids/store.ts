/** SQL for agent DID keys (joined with the agent registry's rows they belong to). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Json, NullableTimestamp } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

/** An agent and, when one was generated, its key. */
const AgentKeyRow = Schema.Struct({
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  capabilities: Json(Schema.Array(Schema.String)),
  status: Schema.String,
  public_key_multibase: Schema.NullOr(Schema.String),
  private_key_sealed: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.Number),
  key_created_at: NullableTimestamp
})
export type AgentKeyRow = typeof AgentKeyRow.Type

export const makeDidsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const select = sql`SELECT a.agent_slug, a.org_uuid, a.name, a.description, a.capabilities, a.status,
      d.public_key_multibase, d.private_key_sealed, d.version, d.created_at AS key_created_at
    FROM agents a LEFT JOIN agent_dids d ON d.agent_slug = a.agent_slug`

  const find = Rows.findOneOption({
    Request: Schema.String,
    Result: AgentKeyRow,
    execute: (slug) => sql`${select} WHERE a.agent_slug = ${slug}`
  })

  const lockVersion = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, slug: Schema.String }),
    Result: Schema.Struct({ version: Schema.NullOr(Schema.Number) }),
    execute: ({ orgUuid, slug }) =>
      sql`SELECT d.version FROM agents a LEFT JOIN agent_dids d ON d.agent_slug = a.agent_slug
          WHERE a.agent_slug = ${slug} AND a.org_uuid = ${orgUuid} FOR UPDATE OF a`
  })

  const upsertKey = Rows.void({
    Request: Schema.Struct({ slug: Schema.String, publicKeyMultibase: Schema.String, sealed: Schema.String, version: Schema.Number }),
    execute: ({ slug, publicKeyMultibase, sealed, version }) =>
      sql`INSERT INTO agent_dids (agent_slug, public_key_multibase, private_key_sealed, version)
          VALUES (${slug}, ${publicKeyMultibase}, ${sealed}, ${version})
          ON CONFLICT (agent_slug) DO UPDATE SET public_key_multibase = EXCLUDED.public_key_multibase,
            private_key_sealed = EXCLUDED.private_key_sealed, version = EXCLUDED.version, rotated_at = now()`
  })

  return sqlDefects({
    sql,
    /** The agent (any organization) with its key, if any. */
    find: (slug: string) => Effect.map(find(slug), Option.getOrUndefined),
    /** Locks the organization's agent row; null version when it has no key yet, undefined when not its agent. */
    lockVersion: (orgUuid: string, slug: string) => Effect.map(lockVersion({ orgUuid, slug }), Option.getOrUndefined),
    /** Stores the agent's key at `version`, replacing (and so destroying) the previous one. */
    storeKey: (slug: string, publicKeyMultibase: string, sealed: string, version: number) => upsertKey({ slug, publicKeyMultibase, sealed, version }),
    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  })
})
