/** SQL for the agent registry. Rows are decoded (`SqlSchema`): ISO timestamps, parsed jsonb. */
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

const AgentRow = Schema.Struct({
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  capabilities: Json(Schema.Array(Schema.String)),
  metadata: JsonObject,
  status: Schema.Literals(["active", "decommissioned"]),
  current_version: Schema.NullOr(Schema.String),
  decommissioned_at: NullableTimestamp,
  decommission_reason: Schema.NullOr(Schema.String),
  public: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type AgentRow = typeof AgentRow.Type

const CountedAgentRow = Schema.Struct({ ...AgentRow.fields, action_count: Count })
export type CountedAgentRow = typeof CountedAgentRow.Type

const VersionRow = Schema.Struct({
  agent_slug: Schema.String,
  version: Schema.String,
  instruction_hash: Schema.NullOr(Schema.String),
  changelog: Schema.NullOr(Schema.String),
  model_id: Schema.NullOr(Schema.String),
  config_hash: Schema.NullOr(Schema.String),
  published_at: Timestamp
})
export type VersionRow = typeof VersionRow.Type

/** `GET …/versions` answers at most this many (the newest): a bare array has no pages. */
export const MAX_VERSION_LIST = 1000

/** What a registration or an update writes. */
export interface AgentFields {
  readonly name: string
  readonly description: string | null
  readonly capabilities: ReadonlyArray<string>
  readonly metadata: Readonly<Record<string, unknown>>
  readonly public: boolean
}

/** What publishing a version writes. */
export interface VersionFields {
  readonly version: string
  readonly instruction_hash: string | null
  readonly changelog: string | null
  readonly model_id: string | null
  readonly config_hash: string | null
}

/** A transfer and its receipt, as stored. */
export interface TransferRecord {
  readonly transfer_receipt_id: string
  readonly agent_slug: string
  readonly previous_owner: string
  readonly new_owner: string
  readonly signed_payload: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly transferred_at: string
}

const BySlug = Schema.Struct({ orgUuid: Schema.String, slug: Schema.String })

/** What a registration or an update writes (capabilities and metadata go to jsonb as they are). */
const Fields = Schema.Struct({
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  capabilities: Schema.Array(Schema.String),
  metadata: Schema.Record(Schema.String, Schema.Unknown),
  public: Schema.Boolean
})

const TransferRow = Schema.Struct({
  transfer_receipt_id: Schema.String,
  agent_slug: Schema.String,
  previous_owner: Schema.String,
  new_owner: Schema.String,
  signed_payload: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  transferred_at: Schema.String
})

/** For a statement that always answers one row (an aggregate, INSERT … RETURNING): no row is a defect. */
const oneRow = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, Effect.die) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

export const makeAgentsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** The agent's actions in its owner's organization (the actions area's table, indexed by org and agent). */
  const actionCount = sql`(SELECT count(*) FROM actions x WHERE x.org_uuid = agents.org_uuid AND x.agent_id = agents.agent_slug)`

  const insert = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, slug: Schema.String, fields: Fields }),
    Result: AgentRow,
    execute: ({ orgUuid, slug, fields }) =>
      sql`INSERT INTO agents (agent_slug, org_uuid, name, description, capabilities, metadata, public, status)
          VALUES (${slug}, ${orgUuid}, ${fields.name}, ${fields.description}, ${jsonb(fields.capabilities)}, ${jsonb(fields.metadata)}, ${fields.public}, 'active')
          ON CONFLICT (agent_slug) DO NOTHING RETURNING *`
  })

  const find = Rows.findOneOption({
    Request: BySlug,
    Result: CountedAgentRow,
    execute: ({ orgUuid, slug }) => sql`SELECT agents.*, ${actionCount} AS action_count FROM agents WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid}`
  })

  const findAnywhere = Rows.findOneOption({
    Request: Schema.String,
    Result: CountedAgentRow,
    execute: (slug) => sql`SELECT agents.*, ${actionCount} AS action_count FROM agents WHERE agent_slug = ${slug}`
  })

  const page = Rows.findAll({
    Request: Schema.Struct({ orgUuid: Schema.String, status: Schema.NullOr(Schema.String), limit: Schema.Number, offset: Schema.Number }),
    Result: CountedAgentRow,
    execute: ({ orgUuid, status, limit, offset }) =>
      sql`SELECT agents.*, ${actionCount} AS action_count FROM agents WHERE org_uuid = ${orgUuid} AND (${status}::text IS NULL OR status = ${status})
          ORDER BY created_at DESC, agent_slug DESC LIMIT ${limit} OFFSET ${offset}`
  })

  const countAll = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, status: Schema.NullOr(Schema.String) }),
    Result: Schema.Struct({ n: Count }),
    execute: ({ orgUuid, status }) => sql`SELECT count(*) AS n FROM agents WHERE org_uuid = ${orgUuid} AND (${status}::text IS NULL OR status = ${status})`
  })

  const update = Rows.findOneOption({
    Request: Schema.Struct({ ...BySlug.fields, fields: Fields }),
    Result: AgentRow,
    execute: ({ orgUuid, slug, fields }) =>
      sql`UPDATE agents SET name = ${fields.name}, description = ${fields.description}, capabilities = ${jsonb(fields.capabilities)},
            metadata = ${jsonb(fields.metadata)}, public = ${fields.public}, updated_at = now()
          WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid} RETURNING *`
  })

  const versions = Rows.findAll({
    Request: Schema.String,
    Result: VersionRow,
    execute: (slug) => sql`SELECT * FROM agent_versions WHERE agent_slug = ${slug} ORDER BY published_at DESC, version DESC LIMIT ${MAX_VERSION_LIST}`
  })

  /** The newest `limit` versions of each agent, newest first, in one statement (a list page's agents). */
  const newestVersions = Rows.findAll({
    Request: Schema.Struct({ slugs: Schema.Array(Schema.String), limit: Schema.Number }),
    Result: VersionRow,
    execute: ({ slugs, limit }) =>
      sql`SELECT v.* FROM jsonb_array_elements_text(${jsonb(slugs)}) s (slug)
          CROSS JOIN LATERAL (
            SELECT * FROM agent_versions WHERE agent_slug = s.slug ORDER BY published_at DESC, version DESC LIMIT ${limit}
          ) v
          ORDER BY v.agent_slug, v.published_at DESC, v.version DESC`
  })

  const lockAgent = Rows.findOneOption({
    Request: BySlug,
    Result: AgentRow,
    execute: ({ orgUuid, slug }) => sql`SELECT * FROM agents WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid} FOR UPDATE`
  })

  const insertVersion = Rows.findAll({
    Request: Schema.Struct({
      slug: Schema.String,
      version: Schema.String,
      instruction_hash: Schema.NullOr(Schema.String),
      changelog: Schema.NullOr(Schema.String),
      model_id: Schema.NullOr(Schema.String),
      config_hash: Schema.NullOr(Schema.String)
    }),
    Result: VersionRow,
    execute: (v) =>
      sql`INSERT INTO agent_versions (agent_slug, version, instruction_hash, changelog, model_id, config_hash)
          VALUES (${v.slug}, ${v.version}, ${v.instruction_hash}, ${v.changelog}, ${v.model_id}, ${v.config_hash})
          ON CONFLICT (agent_slug, version) DO NOTHING RETURNING *`
  })

  const decommission = Rows.findOneOption({
    Request: Schema.Struct({ ...BySlug.fields, reason: Schema.NullOr(Schema.String) }),
    Result: AgentRow,
    execute: ({ orgUuid, slug, reason }) =>
      sql`UPDATE agents SET status = 'decommissioned', decommissioned_at = clock_timestamp(), decommission_reason = ${reason}, updated_at = now()
          WHERE agent_slug = ${slug} AND org_uuid = ${orgUuid} AND status = 'active' RETURNING *`
  })

  const moveTo = Rows.findOneOption({
    Request: Schema.Struct({ fromOrg: Schema.String, slug: Schema.String, toOrg: Schema.String }),
    Result: AgentRow,
    execute: ({ fromOrg, slug, toOrg }) =>
      sql`UPDATE agents SET org_uuid = ${toOrg}, updated_at = now() WHERE agent_slug = ${slug} AND org_uuid = ${fromOrg} AND status = 'active' RETURNING *`
  })

  const setCurrentVersion = Rows.void({
    Request: Schema.Struct({ slug: Schema.String, version: Schema.String }),
    execute: ({ slug, version }) => sql`UPDATE agents SET current_version = ${version}, updated_at = now() WHERE agent_slug = ${slug}`
  })

  const organizationExists = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ org_uuid: Schema.String }),
    execute: (orgUuid) => sql`SELECT org_uuid FROM organizations WHERE org_uuid = ${orgUuid}`
  })

  const insertTransfer = Rows.void({
    Request: TransferRow,
    execute: (t) =>
      sql`INSERT INTO agent_transfers (transfer_receipt_id, agent_slug, previous_owner, new_owner, signed_payload, payload_hash, signature, public_key_id, transferred_at)
          VALUES (${t.transfer_receipt_id}, ${t.agent_slug}, ${t.previous_owner}, ${t.new_owner}, ${t.signed_payload}, ${t.payload_hash}, ${t.signature},
            ${t.public_key_id}, ${t.transferred_at})`
  })

  return sqlDefects({
    sql,

    /** undefined when the slug is taken (by any organization). */
    insert: (orgUuid: string, slug: string, fields: AgentFields) => Effect.map(insert({ orgUuid, slug, fields }), (rows) => rows[0]),

    find: (orgUuid: string, slug: string) => Effect.map(find({ orgUuid, slug }), Option.getOrUndefined),

    /** Whoever owns it: for the public page. */
    findAnywhere: (slug: string) => Effect.map(findAnywhere(slug), Option.getOrUndefined),

    /** A page of the organization's agents, newest first; only those of `status` when given. */
    list: (orgUuid: string, pageNumber: number, perPage: number, status: string | null = null) =>
      Effect.all({
        rows: page({ orgUuid, status, limit: perPage, offset: (pageNumber - 1) * perPage }),
        total: Effect.map(oneRow(countAll({ orgUuid, status })), (row) => row.n)
      }),

    update: (orgUuid: string, slug: string, fields: AgentFields) => Effect.map(update({ orgUuid, slug, fields }), Option.getOrUndefined),

    versions,

    /** Each agent's newest `limit` versions, by slug. */
    newestVersions: (slugs: ReadonlyArray<string>, limit: number) =>
      Effect.map(newestVersions({ slugs, limit }), (rows) => {
        const bySlug = new Map<string, Array<VersionRow>>()
        for (const row of rows) {
          const list = bySlug.get(row.agent_slug)
          if (list === undefined) bySlug.set(row.agent_slug, [row])
          else list.push(row)
        }
        return bySlug
      }),

    /**
     * Publishes a version in one transaction with the agent row locked (a decommission cannot slip
     * between the status check and the insert): the agent as it was, and the version row, or
     * undefined when that version exists.
     */
    publishVersion: (orgUuid: string, slug: string, version: VersionFields) =>
      sql.withTransaction(
        Effect.gen(function* () {
          const agent = Option.getOrUndefined(yield* lockAgent({ orgUuid, slug }))
          if (agent === undefined || agent.status !== "active") return { agent, published: undefined }
          const [published] = yield* insertVersion({ slug, ...version })
          if (published !== undefined) yield* setCurrentVersion({ slug, version: published.version })
          return { agent, published }
        })
      ),

    /**
     * active → decommissioned; undefined when the agent is not there or not active. The row is
     * locked first, which waits for the notarizations holding it (actions store, FOR SHARE), so
     * `decommissioned_at` is read after every receipt that made it in.
     */
    decommission: (orgUuid: string, slug: string, reason: string | null) =>
      sql.withTransaction(
        Effect.flatMap(lockAgent({ orgUuid, slug }), (locked) =>
          Option.isNone(locked) || locked.value.status !== "active"
            ? Effect.succeed(undefined)
            : Effect.map(decommission({ orgUuid, slug, reason }), Option.getOrUndefined)
        )
      ),

    organizationExists: (orgUuid: string) => Effect.map(organizationExists(orgUuid), Option.isSome),

    /** Moves an active agent to another organization (the row lock waits for notarizations holding it); the row, or undefined. */
    moveTo: (fromOrg: string, slug: string, toOrg: string) =>
      Effect.map(moveTo({ fromOrg, slug, toOrg }), Option.getOrUndefined),

    insertTransfer: (t: TransferRecord) => insertTransfer(t),

    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  })
})

export type AgentsStore = Effect.Success<typeof makeAgentsStore>
