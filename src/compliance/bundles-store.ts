/**
 * SQL of compliance bundles: the claim and the sealed row, the leaves (which receipt sits at which
 * index, with its payload digest, `LEAF_CHUNK` to a row), the tree's tiles, the counts of a
 * framework summary, and the export's pages. Every read is scoped by organization or by a bundle
 * already found in it; the leaves are numbered inside Postgres and read back a chunk at a time,
 * never as one result set.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { BundleFrameworks, BundleRecord } from "../../protocol/compliance-bundles.js"
import { Count, Json, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import { type TileKey, type Tiles, tileName, type WrittenTile } from "../settlements/log.js"

const HASH_SIZE = 32
/** Leaves per stored row; one export page. */
export const LEAF_CHUNK = 512

/** A claim or a sealed bundle, as the idempotency check reads it. */
const ClaimRow = Schema.Struct({
  bundle_uuid: Schema.String,
  status: Schema.Literals(["sealing", "sealed"]),
  request_hash: Schema.String,
  claimed_at: Timestamp
})
export type ClaimRow = typeof ClaimRow.Type

export interface NewClaim {
  readonly bundle_uuid: string
  readonly org_uuid: string
  readonly framework: string
  readonly idempotency_key: string | null
  readonly request_hash: string
  readonly created_by: string
  readonly claimed_at: string
}

const SealedRow = Schema.Struct({
  bundle_uuid: Schema.String,
  org_uuid: Schema.String,
  idempotency_key: Schema.NullOr(Schema.String),
  created_by: Schema.String,
  receipt_count: Count,
  /** The exact JCS text that was hashed and signed. */
  signed_record: Schema.String,
  record: Json(BundleRecord),
  bundle_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String
})
export type SealedRow = typeof SealedRow.Type
const SEALED_COLUMNS = `bundle_uuid, org_uuid, idempotency_key, created_by, receipt_count, signed_record, signed_record AS record, bundle_hash, signature, public_key_id`

export interface Seal {
  readonly bundle_uuid: string
  readonly receipt_count: number
  readonly signed_record: string
  readonly bundle_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly sealed_at: string
}

/** What a bundle seals: the organization's receipts created in [from, to], optionally of some agents. */
export interface Scope {
  readonly orgUuid: string
  readonly from: string
  readonly to: string
  readonly agents: ReadonlyArray<string> | null
}
const ScopeSchema = Schema.Struct({ orgUuid: Schema.String, from: Schema.String, to: Schema.String, agents: Schema.NullOr(Schema.Array(Schema.String)) })

/** Counts over the bundle's own receipts, made while they are numbered. */
const ReceiptTally = Schema.Struct({
  receipt_count: Count,
  notarized: Count,
  failed: Count,
  denied: Count,
  denied_by_human: Count,
  distinct_agents: Count,
  timestamped: Count
})
export type ReceiptTally = typeof ReceiptTally.Type

/** Counts over the actions created in the period. */
const ActionTally = Schema.Struct({
  total_actions: Count,
  distinct_models: Count,
  distinct_agent_versions: Count,
  policy_denials: Count,
  approvals_requested: Count,
  human_approvals: Count,
  human_denials: Count,
  output_scan_flagged: Count,
  output_scanned: Count
})
export type ActionTally = typeof ActionTally.Type & { readonly status_breakdown: Record<string, number>; readonly cosignatures: number }

const DriftTally = Schema.Struct({ drift_checks: Count, drift_alerts: Count, drift_alerts_acknowledged: Count })
export type DriftTally = typeof DriftTally.Type
const DoraTally = Schema.Struct({ opened: Count, resolved: Count })
export type DoraTally = typeof DoraTally.Type

const ExportRow = Schema.Struct({
  leaf_index: Count,
  receipt_uuid: Schema.String,
  action_uuid: Schema.String,
  receipt_status: Schema.String,
  created_at: Timestamp,
  payload_hash: Schema.String,
  signed_payload: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String)
})
export type ExportRow = typeof ExportRow.Type

const LeafRow = Schema.Struct({ leaf_index: Count, payload_hash: Schema.String })
const TileRow = Schema.Struct({ level: Schema.Number, tile_index: Count, hashes: Schema.Uint8Array })
const N = Schema.Struct({ n: Count })
const Uuid = Schema.Struct({ bundleUuid: Schema.String })

/** A statement that always answers one row (an aggregate): none is a defect. */
const always = <A, E, R>(effect: Effect.Effect<A, E | Cause.NoSuchElementError, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, (error) => Effect.die(error)) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

export const makeBundlesStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const sealedColumns = sql.literal(SEALED_COLUMNS)
  // Constants written into the statements (a GROUP BY expression must repeat its SELECT's exactly).
  const chunkSize = sql.literal(String(LEAF_CHUNK))
  const hashSize = sql.literal(String(HASH_SIZE))

  const agentClause = (column: string, agents: ReadonlyArray<string> | null) =>
    agents === null ? sql`TRUE` : sql`${sql.literal(column)} IN (SELECT jsonb_array_elements_text(${jsonb(agents)}))`
  const inPeriod = (column: string, scope: Scope) => sql`${sql.literal(column)} >= ${scope.from} AND ${sql.literal(column)} <= ${scope.to}`

  const claimOf = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, key: Schema.String }),
    Result: ClaimRow,
    execute: ({ orgUuid, key }) =>
      sql`SELECT bundle_uuid, status, request_hash, claimed_at FROM compliance_bundles WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key}`
  })

  const claim = Rows.findAll({
    Request: Schema.Struct({
      bundle_uuid: Schema.String,
      org_uuid: Schema.String,
      framework: Schema.String,
      idempotency_key: Schema.NullOr(Schema.String),
      request_hash: Schema.String,
      created_by: Schema.String,
      claimed_at: Schema.String
    }),
    Result: Uuid,
    execute: (c) =>
      sql`INSERT INTO compliance_bundles (bundle_uuid, org_uuid, status, framework, idempotency_key, request_hash, created_by, claimed_at)
          VALUES (${c.bundle_uuid}, ${c.org_uuid}, 'sealing', ${c.framework}, ${c.idempotency_key}, ${c.request_hash}, ${c.created_by}, ${c.claimed_at})
          ON CONFLICT (org_uuid, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING bundle_uuid AS "bundleUuid"`
  })

  const dropStaleClaim = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, key: Schema.String, before: Schema.String }),
    execute: ({ orgUuid, key, before }) =>
      sql`DELETE FROM compliance_bundles WHERE org_uuid = ${orgUuid} AND idempotency_key = ${key} AND status = 'sealing' AND claimed_at < ${before}`
  })

  const release = Rows.void({
    Request: Schema.String,
    execute: (bundleUuid) => sql`DELETE FROM compliance_bundles WHERE bundle_uuid = ${bundleUuid} AND status = 'sealing'`
  })

  const countPeriod = Rows.findOne({
    Request: ScopeSchema,
    Result: N,
    execute: (scope) =>
      sql`SELECT count(*) AS n FROM receipts r WHERE r.org_uuid = ${scope.orgUuid} AND ${inPeriod("r.created_at", scope)} AND ${agentClause("r.agent_id", scope.agents)}`
  })

  /**
   * Numbers the period's receipts in (created_at, receipt_uuid) order inside Postgres, stores them
   * `LEAF_CHUNK` to a row, and counts them in the same pass.
   */
  const insertLeaves = (bundleUuid: string, scope: Scope) =>
    Effect.gen(function* () {
      // The window sort of a large period stays in memory instead of spilling to disk.
      yield* sql.unsafe(`SET LOCAL work_mem = '64MB'`)
      return yield* always(
        Rows.findOne({
          Request: ScopeSchema,
          Result: ReceiptTally,
          execute: (scope) =>
            sql`WITH numbered AS (
                  SELECT row_number() OVER (ORDER BY r.created_at, r.receipt_uuid) - 1 AS leaf_index, r.receipt_uuid,
                    decode(substr(r.payload_hash, 8), 'hex') AS digest, r.receipt_status, r.agent_id, r.timestamp_token IS NOT NULL AS stamped
                  FROM receipts r
                  WHERE r.org_uuid = ${scope.orgUuid} AND ${inPeriod("r.created_at", scope)} AND ${agentClause("r.agent_id", scope.agents)}
                ),
                stored AS (
                  INSERT INTO compliance_bundle_leaves (bundle_uuid, chunk, org_uuid, receipt_uuids, digests)
                  SELECT ${bundleUuid}, leaf_index / ${chunkSize}, ${scope.orgUuid}, array_agg(receipt_uuid ORDER BY leaf_index),
                    string_agg(digest, ''::bytea ORDER BY leaf_index)
                  FROM numbered GROUP BY leaf_index / ${chunkSize}
                )
                SELECT count(*) AS receipt_count,
                  count(*) FILTER (WHERE receipt_status = 'notarized') AS notarized,
                  count(*) FILTER (WHERE receipt_status = 'failed') AS failed,
                  count(*) FILTER (WHERE receipt_status = 'denied') AS denied,
                  count(*) FILTER (WHERE receipt_status = 'denied_by_human') AS denied_by_human,
                  count(DISTINCT agent_id) AS distinct_agents,
                  count(*) FILTER (WHERE stamped) AS timestamped
                FROM numbered`
        })(scope)
      )
    })

  /** The leaf digests of chunks [from, to), concatenated in leaf order. */
  const digestsRow = Rows.findOne({
    Request: Schema.Struct({ bundleUuid: Schema.String, from: Schema.Number, to: Schema.Number }),
    Result: Schema.Struct({ digests: Schema.NullOr(Schema.Uint8Array) }),
    execute: ({ bundleUuid, from, to }) =>
      sql`SELECT string_agg(digests, ''::bytea ORDER BY chunk) AS digests FROM compliance_bundle_leaves
          WHERE bundle_uuid = ${bundleUuid} AND chunk >= ${from} AND chunk < ${to}`
  })

  const tileRows = (bundleUuid: string, keys: ReadonlyArray<TileKey>) => {
    // Integers we computed, written as a row list so the planner probes the primary key for each.
    const wanted = keys.map((key) => `(${Math.trunc(key.level)}, ${Math.trunc(key.index)})`).join(", ")
    return Rows.findAll({
      Request: Schema.Void,
      Result: TileRow,
      execute: () => sql.unsafe(`SELECT level, tile_index, hashes FROM compliance_bundle_tiles WHERE bundle_uuid = $1 AND (level, tile_index) IN (${wanted})`, [bundleUuid])
    })(undefined)
  }

  const actionCounts = Rows.findOne({
    Request: ScopeSchema,
    Result: ActionTally,
    execute: (scope) =>
      sql`SELECT count(*) AS total_actions, count(DISTINCT a.model_id) AS distinct_models,
            count(DISTINCT (a.agent_id, a.agent_version)) FILTER (WHERE a.agent_version IS NOT NULL) AS distinct_agent_versions,
            count(*) FILTER (WHERE a.status = 'denied_by_policy') AS policy_denials,
            count(*) FILTER (WHERE (a.require_approval OR a.approval_by_policy) AND a.status <> 'denied_by_policy') AS approvals_requested,
            count(*) FILTER (WHERE a.approved_at IS NOT NULL AND a.status <> 'denied_by_human') AS human_approvals,
            count(*) FILTER (WHERE a.status = 'denied_by_human' AND a.approval_via IS DISTINCT FROM 'expiry') AS human_denials,
            count(*) FILTER (WHERE jsonb_typeof(a.output_scan_flags) = 'array' AND jsonb_array_length(a.output_scan_flags) > 0) AS output_scan_flagged,
            count(*) FILTER (WHERE a.outcome_hash IS NOT NULL) AS output_scanned
          FROM actions a
          WHERE a.org_uuid = ${scope.orgUuid} AND ${inPeriod("a.created_at", scope)} AND ${agentClause("a.agent_id", scope.agents)}`
  })
  const cosignatureCount = Rows.findOne({
    Request: ScopeSchema,
    Result: N,
    execute: (scope) =>
      sql`SELECT count(*) AS n FROM action_cosignatures c JOIN actions a ON a.action_uuid = c.action_uuid
          WHERE c.org_uuid = ${scope.orgUuid} AND a.org_uuid = ${scope.orgUuid} AND ${inPeriod("a.created_at", scope)} AND ${agentClause("a.agent_id", scope.agents)}`
  })
  const statusCounts = Rows.findAll({
    Request: ScopeSchema,
    Result: Schema.Struct({ status: Schema.String, n: Count }),
    execute: (scope) =>
      sql`SELECT a.status, count(*) AS n FROM actions a
          WHERE a.org_uuid = ${scope.orgUuid} AND ${inPeriod("a.created_at", scope)} AND ${agentClause("a.agent_id", scope.agents)}
          GROUP BY a.status`
  })

  const driftCounts = Rows.findOne({
    Request: ScopeSchema,
    Result: DriftTally,
    execute: (scope) =>
      sql`SELECT
            (SELECT count(*) FROM usage_events u WHERE u.org_uuid = ${scope.orgUuid} AND u.event_type = 'drift_check'
              AND ${inPeriod("u.created_at", scope)} AND ${agentClause("u.subject", scope.agents)}) AS drift_checks,
            count(*) AS drift_alerts,
            count(*) FILTER (WHERE d.acknowledged_at IS NOT NULL) AS drift_alerts_acknowledged
          FROM drift_alerts d
          WHERE d.org_uuid = ${scope.orgUuid} AND ${inPeriod("d.detected_at", scope)} AND ${agentClause("d.agent_id", scope.agents)}`
  })

  const doraCounts = Rows.findOne({
    Request: ScopeSchema,
    Result: DoraTally,
    execute: (scope) =>
      sql`SELECT count(*) FILTER (WHERE ${inPeriod("detected_at", scope)}) AS opened, count(*) FILTER (WHERE ${inPeriod("resolved_at", scope)}) AS resolved
          FROM dora_incidents WHERE org_uuid = ${scope.orgUuid}`
  })

  const sealRows = Rows.findAll({
    Request: Schema.Struct({
      bundle_uuid: Schema.String,
      receipt_count: Schema.Number,
      signed_record: Schema.String,
      bundle_hash: Schema.String,
      signature: Schema.String,
      public_key_id: Schema.String,
      sealed_at: Schema.String
    }),
    Result: Uuid,
    execute: (s) =>
      sql`UPDATE compliance_bundles SET status = 'sealed', receipt_count = ${s.receipt_count}, signed_record = ${s.signed_record},
            bundle_hash = ${s.bundle_hash}, signature = ${s.signature}, public_key_id = ${s.public_key_id}, sealed_at = ${s.sealed_at}
          WHERE bundle_uuid = ${s.bundle_uuid} AND status = 'sealing'
          RETURNING bundle_uuid AS "bundleUuid"`
  })

  const recordUsage = Rows.void({
    Request: Schema.Struct({ orgUuid: Schema.String, subject: Schema.String, at: Schema.String }),
    execute: ({ orgUuid, subject, at }) =>
      sql`INSERT INTO usage_events (org_uuid, event_type, subject, created_at) VALUES (${orgUuid}, 'compliance_bundle', ${subject}, ${at})`
  })

  const bundleById = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, bundleUuid: Schema.String }),
    Result: SealedRow,
    execute: ({ orgUuid, bundleUuid }) =>
      sql`SELECT ${sealedColumns} FROM compliance_bundles WHERE org_uuid = ${orgUuid} AND bundle_uuid = ${bundleUuid} AND status = 'sealed'`
  })

  const ListFilter = Schema.Struct({ orgUuid: Schema.String, framework: Schema.NullOr(Schema.Literals(BundleFrameworks)) })
  const listWhere = (filter: typeof ListFilter.Type) =>
    sql`org_uuid = ${filter.orgUuid} AND status = 'sealed' AND ${filter.framework === null ? sql`TRUE` : sql`framework = ${filter.framework}`}`
  const bundlePage = Rows.findAll({
    Request: Schema.Struct({ ...ListFilter.fields, limit: Schema.Number, offset: Schema.Number }),
    Result: SealedRow,
    execute: (request) =>
      sql`SELECT ${sealedColumns} FROM compliance_bundles WHERE ${listWhere(request)}
          ORDER BY sealed_at DESC, bundle_uuid DESC LIMIT ${request.limit} OFFSET ${request.offset}`
  })
  const bundleCount = Rows.findOne({
    Request: ListFilter,
    Result: N,
    execute: (filter) => sql`SELECT count(*) AS n FROM compliance_bundles WHERE ${listWhere(filter)}`
  })

  const leafOf = Rows.findOneOption({
    Request: Schema.Struct({ bundleUuid: Schema.String, receiptUuid: Schema.String }),
    Result: LeafRow,
    execute: ({ bundleUuid, receiptUuid }) =>
      sql`SELECT c.chunk * ${chunkSize} + p.at - 1 AS leaf_index, 'sha256:' || encode(substring(c.digests FROM (p.at - 1) * ${hashSize} + 1 FOR ${hashSize}), 'hex') AS payload_hash
          FROM compliance_bundle_leaves c CROSS JOIN LATERAL (SELECT array_position(c.receipt_uuids, ${receiptUuid}::text) AS at) p
          WHERE c.bundle_uuid = ${bundleUuid} AND ${receiptUuid}::text = ANY (c.receipt_uuids)`
  })

  const exportPage = Rows.findAll({
    Request: Schema.Struct({ bundleUuid: Schema.String, chunk: Schema.Number }),
    Result: ExportRow,
    execute: ({ bundleUuid, chunk }) =>
      sql`SELECT c.chunk * ${chunkSize} + u.at - 1 AS leaf_index, r.receipt_uuid, r.action_uuid, r.receipt_status, r.created_at, r.payload_hash,
            r.signed_payload, r.signature, r.public_key_id, r.timestamp_token
          FROM compliance_bundle_leaves c
          CROSS JOIN LATERAL unnest(c.receipt_uuids) WITH ORDINALITY AS u(receipt_uuid, at)
          JOIN receipts r ON r.receipt_uuid = u.receipt_uuid
          WHERE c.bundle_uuid = ${bundleUuid} AND c.chunk = ${chunk}
          ORDER BY u.at`
  })

  return sqlDefects({
    sql,

    /** The bundle (sealed, or still sealing) that holds the organization's idempotency key. */
    claimOf: (orgUuid: string, key: string) => Effect.map(claimOf({ orgUuid, key }), Option.getOrUndefined),

    /** Inserts the `sealing` row; false when another row already holds its idempotency key. */
    claim: (row: NewClaim) => Effect.map(claim(row), (rows) => rows.length === 1),

    /** Removes a `sealing` row claimed before `before` (its request died): its key is free again. */
    dropStaleClaim: (orgUuid: string, key: string, before: string) => dropStaleClaim({ orgUuid, key, before }),

    /** Removes an unsealed claim (refused, failed or interrupted): nothing of it is kept. */
    release: (bundleUuid: string) => release(bundleUuid),

    countPeriod: (scope: Scope) => Effect.map(always(countPeriod(scope)), (row) => row.n),

    insertLeaves,

    /** The leaves' payload digests (32 bytes each) of chunks [from, to), in leaf order. */
    leafDigests: (bundleUuid: string, from: number, to: number) =>
      Effect.gen(function* () {
        const { digests } = yield* always(digestsRow({ bundleUuid, from, to }))
        const leaves: Array<Uint8Array> = []
        if (digests === null) return leaves
        if (digests.length % HASH_SIZE !== 0) return yield* Effect.die(new Error(`bundle ${bundleUuid}: a leaf digest in chunks ${from}..${to} is not ${HASH_SIZE} bytes`))
        for (let at = 0; at < digests.length; at += HASH_SIZE) leaves.push(digests.subarray(at, at + HASH_SIZE))
        return leaves
      }),

    readTiles: (bundleUuid: string, keys: ReadonlyArray<TileKey>) =>
      Effect.gen(function* () {
        const tiles = new Map<string, Uint8Array>()
        if (keys.length === 0) return tiles as Tiles
        for (const row of yield* tileRows(bundleUuid, keys)) tiles.set(tileName(row.level, row.tile_index), new Uint8Array(row.hashes))
        return tiles as Tiles
      }),

    /** Stores tiles; a partly filled one is written once, at the end, so nothing is replaced. */
    writeTiles: (bundleUuid: string, orgUuid: string, tiles: ReadonlyArray<WrittenTile>) =>
      tiles.length === 0
        ? Effect.void
        : sql`INSERT INTO compliance_bundle_tiles (bundle_uuid, level, tile_index, org_uuid, hashes)
              SELECT ${bundleUuid}, t.level, t.tile_index, ${orgUuid}, decode(t.hashes, 'hex')
              FROM jsonb_to_recordset(${jsonb(tiles.map((tile) => ({ level: tile.level, tile_index: tile.index, hashes: Buffer.from(tile.hashes).toString("hex") })))})
                AS t(level int, tile_index bigint, hashes text)`.pipe(Effect.asVoid),

    actionTally: (scope: Scope) =>
      Effect.gen(function* () {
        const counts = yield* always(actionCounts(scope))
        const status_breakdown: Record<string, number> = {}
        for (const row of yield* statusCounts(scope)) status_breakdown[row.status] = row.n
        const { n: cosignatures } = yield* always(cosignatureCount(scope))
        return { ...counts, status_breakdown, cosignatures } satisfies ActionTally
      }),

    driftTally: (scope: Scope) => always(driftCounts(scope)),

    doraTally: (scope: Scope) => always(doraCounts(scope)),

    /** Turns the claim into the sealed bundle; false when the claim is gone (it was dropped as stale). */
    seal: (row: Seal) => Effect.map(sealRows(row), (rows) => rows.length === 1),

    recordUsage: (orgUuid: string, subject: string, at: string) => recordUsage({ orgUuid, subject, at }),

    bundleById: (orgUuid: string, bundleUuid: string) => Effect.map(bundleById({ orgUuid, bundleUuid }), Option.getOrUndefined),

    listBundles: (orgUuid: string, framework: (typeof BundleFrameworks)[number] | null, limit: number, offset: number) =>
      Effect.gen(function* () {
        const rows = yield* bundlePage({ orgUuid, framework, limit, offset })
        const { n } = yield* always(bundleCount({ orgUuid, framework }))
        return { rows, total: n }
      }),

    leafOf: (bundleUuid: string, receiptUuid: string) => Effect.map(leafOf({ bundleUuid, receiptUuid }), Option.getOrUndefined),

    /** The receipts of one chunk of leaves, in leaf order. */
    exportPage: (bundleUuid: string, chunk: number) => exportPage({ bundleUuid, chunk })
  })
})

export type BundlesStore = Effect.Success<typeof makeBundlesStore>
