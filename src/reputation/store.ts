/**
 * SQL for reputation: the counts an agent's score is computed from, its snapshots and the
 * attestations of its actions. The agent's actions are read from the actions area's table through
 * its owners over time (`agent_transfers`): each owner's actions between the transfers that gave
 * and took the agent, on the index by organization, agent and time.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { ReputationInputs, ReputationTier, SnapshotTriggers } from "../../protocol/reputation.js"
import { Count, Json, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const AgentRow = Schema.Struct({
  agent_slug: Schema.String,
  org_uuid: Schema.String,
  status: Schema.String,
  created_at: Timestamp
})
export type AgentRow = typeof AgentRow.Type

/** What the statement counts; the rest of the inputs come from the agent row and the clock. */
const CountsRow = Schema.Struct({
  notarized: Count,
  failed: Count,
  denied_by_policy: Count,
  denied_by_human: Count,
  human_approved: Count,
  attested_success: Count,
  attested_failure: Count,
  attestations: Count
})
export type CountsRow = typeof CountsRow.Type

const SnapshotRow = Schema.Struct({
  snapshot_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_slug: Schema.String,
  formula_version: Schema.String,
  inputs: Json(ReputationInputs),
  score: Schema.Number,
  tier: ReputationTier,
  score_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  computed_at: Timestamp,
  trigger: Schema.Literals(SnapshotTriggers)
})
export type SnapshotRow = typeof SnapshotRow.Type

const OwnedActionRow = Schema.Struct({ action_uuid: Schema.String, org_uuid: Schema.String, status: Schema.String })
export type OwnedActionRow = typeof OwnedActionRow.Type

export interface NewAttestation {
  readonly attestation_uuid: string
  readonly org_uuid: string
  readonly agent_slug: string
  readonly action_uuid: string
  readonly counterparty_did: string
  readonly outcome: "success" | "failure"
  readonly attested_at: string
  readonly attestation: string
  readonly signature: string
  readonly attestation_hash: string
  readonly verification_method: string
  readonly recorded_at: string
}

const AttestationFields = Schema.Struct({
  attestation_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_slug: Schema.String,
  action_uuid: Schema.String,
  counterparty_did: Schema.String,
  outcome: Schema.Literals(["success", "failure"]),
  attested_at: Schema.String,
  attestation: Schema.String,
  signature: Schema.String,
  attestation_hash: Schema.String,
  verification_method: Schema.String,
  recorded_at: Schema.String
})

/** For a statement that always answers one row (an aggregate): no row is a defect. */
const oneRow = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, Effect.die) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

const SNAPSHOT_COLUMNS = "snapshot_uuid, org_uuid, agent_slug, formula_version, inputs, score, tier, score_hash, signature, public_key_id, computed_at, trigger"

export const makeReputationStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /**
   * `owners (org_uuid, since, until)`: who owned the agent when. Before its first transfer, the
   * organization that gave it away (or the current owner, never transferred); after each, the
   * receiving one until the next.
   */
  const owners = (slug: string) => sql`
    t AS (
      SELECT previous_owner, new_owner, transferred_at,
        row_number() OVER (ORDER BY transferred_at, transfer_receipt_id) AS n,
        lead(transferred_at) OVER (ORDER BY transferred_at, transfer_receipt_id) AS next_at
      FROM agent_transfers WHERE agent_slug = ${slug}
    ), owners AS (
      SELECT COALESCE((SELECT previous_owner FROM t WHERE n = 1), g.org_uuid) AS org_uuid, '-infinity'::timestamptz AS since,
        COALESCE((SELECT transferred_at FROM t WHERE n = 1), 'infinity'::timestamptz) AS until
      FROM agents g WHERE g.agent_slug = ${slug}
      UNION ALL
      SELECT new_owner, transferred_at, COALESCE(next_at, 'infinity'::timestamptz) FROM t
    )`

  /** The agent's actions: its agent_id, in the organization that owned it when each was created. */
  const ownedActions = (slug: string) =>
    sql`actions a JOIN owners o ON a.org_uuid = o.org_uuid AND a.agent_id = ${slug} AND a.created_at >= o.since AND a.created_at < o.until`

  const agent = Rows.findOneOption({
    Request: Schema.String,
    Result: AgentRow,
    execute: (slug) => sql`SELECT agent_slug, org_uuid, status, created_at FROM agents WHERE agent_slug = ${slug}`
  })

  const counts = Rows.findOne({
    Request: Schema.String,
    Result: CountsRow,
    execute: (slug) => sql`
      WITH ${owners(slug)}
      SELECT
        count(*) FILTER (WHERE a.status = 'notarized') AS notarized,
        count(*) FILTER (WHERE a.status = 'failed') AS failed,
        count(*) FILTER (WHERE a.status = 'denied_by_policy') AS denied_by_policy,
        count(*) FILTER (WHERE a.status = 'denied_by_human' AND a.approval_via IS DISTINCT FROM 'expiry') AS denied_by_human,
        count(*) FILTER (WHERE a.approved_at IS NOT NULL AND a.status IN ('approved', 'notarized', 'failed')) AS human_approved,
        (SELECT count(DISTINCT r.action_uuid) FROM reputation_attestations r WHERE r.agent_slug = ${slug} AND r.outcome = 'success') AS attested_success,
        (SELECT count(DISTINCT r.action_uuid) FROM reputation_attestations r WHERE r.agent_slug = ${slug} AND r.outcome = 'failure') AS attested_failure,
        (SELECT count(*) FROM reputation_attestations r WHERE r.agent_slug = ${slug}) AS attestations
      FROM ${ownedActions(slug)}`
  })

  const columns = sql.literal(SNAPSHOT_COLUMNS)

  const latest = Rows.findOneOption({
    Request: Schema.String,
    Result: SnapshotRow,
    execute: (slug) => sql`SELECT ${columns} FROM reputation_snapshots WHERE agent_slug = ${slug} ORDER BY seq DESC LIMIT 1`
  })

  const page = Rows.findAll({
    Request: Schema.Struct({ slug: Schema.String, limit: Schema.Number, offset: Schema.Number }),
    Result: SnapshotRow,
    execute: ({ slug, limit, offset }) =>
      sql`SELECT ${columns} FROM reputation_snapshots WHERE agent_slug = ${slug} ORDER BY seq DESC LIMIT ${limit} OFFSET ${offset}`
  })

  const total = Rows.findOne({
    Request: Schema.String,
    Result: Schema.Struct({ n: Count }),
    execute: (slug) => sql`SELECT count(*) AS n FROM reputation_snapshots WHERE agent_slug = ${slug}`
  })

  const insertSnapshot = Rows.void({
    Request: Schema.Struct({ ...SnapshotRow.fields, inputs: ReputationInputs, computed_at: Schema.String }),
    execute: (s) =>
      sql`INSERT INTO reputation_snapshots (snapshot_uuid, org_uuid, agent_slug, formula_version, inputs, score, tier, score_hash, signature, public_key_id, computed_at, trigger)
          VALUES (${s.snapshot_uuid}, ${s.org_uuid}, ${s.agent_slug}, ${s.formula_version}, ${jsonb(s.inputs)}, ${s.score}, ${s.tier}, ${s.score_hash},
            ${s.signature}, ${s.public_key_id}, ${s.computed_at}, ${s.trigger})`
  })

  /** Serializes the snapshots of one agent (two readers would otherwise both store the same new one). */
  const lock = Rows.void({
    Request: Schema.String,
    execute: (slug) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${`reputation:${slug}`}, 0))`
  })

  const ownedAction = Rows.findOneOption({
    Request: Schema.Struct({ slug: Schema.String, actionUuid: Schema.String }),
    Result: OwnedActionRow,
    execute: ({ slug, actionUuid }) =>
      sql`WITH ${owners(slug)} SELECT a.action_uuid, a.org_uuid, a.status FROM ${ownedActions(slug)} WHERE a.action_uuid = ${actionUuid}`
  })

  const ownerOf = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ org_uuid: Schema.String }),
    execute: (slug) => sql`SELECT org_uuid FROM agents WHERE agent_slug = ${slug}`
  })

  const insertAttestation = Rows.findAll({
    Request: AttestationFields,
    Result: Schema.Struct({ attestation_uuid: Schema.String }),
    execute: (a) =>
      sql`INSERT INTO reputation_attestations (attestation_uuid, org_uuid, agent_slug, action_uuid, counterparty_did, outcome, attested_at, attestation,
            signature, attestation_hash, verification_method, recorded_at)
          VALUES (${a.attestation_uuid}, ${a.org_uuid}, ${a.agent_slug}, ${a.action_uuid}, ${a.counterparty_did}, ${a.outcome}, ${a.attested_at},
            ${a.attestation}, ${a.signature}, ${a.attestation_hash}, ${a.verification_method}, ${a.recorded_at})
          ON CONFLICT (action_uuid, counterparty_did) DO NOTHING RETURNING attestation_uuid`
  })

  return sqlDefects({
    sql,
    agent: (slug: string) => Effect.map(agent(slug), Option.getOrUndefined),
    /** Every count of the inputs (the agent must exist: its row names the first owner). */
    counts: (slug: string) => oneRow(counts(slug)),
    latest: (slug: string) => Effect.map(latest(slug), Option.getOrUndefined),
    history: (slug: string, pageNumber: number, perPage: number) =>
      Effect.all({
        rows: page({ slug, limit: perPage, offset: (pageNumber - 1) * perPage }),
        total: Effect.map(oneRow(total(slug)), (row) => row.n)
      }),
    insertSnapshot: (snapshot: SnapshotRow) => insertSnapshot(snapshot),
    lock,
    /** The action when it is this agent's (its agent_id, in the organization that owned the agent then). */
    ownedAction: (slug: string, actionUuid: string) => Effect.map(ownedAction({ slug, actionUuid }), Option.getOrUndefined),
    /** The organization an agent belongs to now, or undefined when there is no such agent. */
    ownerOf: (slug: string) => Effect.map(ownerOf(slug), (row) => Option.getOrUndefined(Option.map(row, (r) => r.org_uuid))),
    /** false when this DID already attested this action. */
    insertAttestation: (attestation: NewAttestation) => Effect.map(insertAttestation(attestation), (rows) => rows.length > 0)
  })
})

export type ReputationStore = Effect.Success<typeof makeReputationStore>
