/**
 * SQL of the settlement log. Every function reads the SqlClient when it runs,
 * so a whole settlement (lock, leaves, tiles, head) is one transaction.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Count, NullableTimestamp, Timestamp } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import { offset } from "../platform/sql.js"
import { type TileKey, type Tiles, tileName, type WrittenTile } from "./log.js"

/**
 * A receipt is stamped just before the statement that stores it commits, so one
 * stamped more than this before the newest settled receipt cannot still appear;
 * older receipts are not scanned again (the anti-join stays small).
 */
const LATE_COMMIT_MARGIN = "10 minutes"

/** work_mem of a settlement's transaction: 1M leaves sort in about 160 MB of Postgres memory. */
const SORT_MEMORY = "256MB"

const SettlementRow = Schema.Struct({
  settlement_uuid: Schema.String,
  org_uuid: Schema.String,
  previous_size: Count,
  tree_size: Count,
  receipt_count: Count,
  period_start: Timestamp,
  period_end: Timestamp,
  merkle_root: Schema.String,
  settlement_hash: Schema.String,
  signature: Schema.String,
  signing_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  checkpoint: Schema.String,
  sealed_at: Timestamp
})
export type SettlementRow = typeof SettlementRow.Type

const SettledReceiptRow = Schema.Struct({
  receipt_uuid: Schema.String,
  action_uuid: Schema.String,
  action_type: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  payload_hash: Schema.String,
  created_at: Timestamp
})
export type SettledReceiptRow = typeof SettledReceiptRow.Type

/** A statement that always answers a row (an aggregate, a row just upserted): no row is a defect. */
const always = <A, E, R>(effect: Effect.Effect<A, E | Cause.NoSuchElementError, R>): Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R> =>
  Effect.catchIf(effect, Cause.isNoSuchElementError, (error) => Effect.die(error)) as Effect.Effect<A, Exclude<E, Cause.NoSuchElementError>, R>

const HASH_SIZE = 32

const SizeRow = Schema.Struct({ size: Count })
const BatchRow = Schema.Struct({ appended: Count, period_start: NullableTimestamp, period_end: NullableTimestamp })
const DigestsRow = Schema.Struct({ digests: Schema.NullOr(Schema.Uint8Array) })
const TileRow = Schema.Struct({ level: Schema.Number, tile_index: Count, hashes: Schema.Uint8Array })
const TotalRow = Schema.Struct({ total: Count })
const LeafRow = Schema.Struct({ leaf_index: Count, settlement_uuid: Schema.String, tree_size: Count, merkle_root: Schema.String })

/** Locks the organization's log head (creating it) and answers its size. */
const lockLog = (org: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* Rows.void({
      Request: Schema.String,
      execute: (org) => sql`INSERT INTO settlement_logs (org_uuid, size) VALUES (${org}, 0) ON CONFLICT (org_uuid) DO NOTHING`
    })(org)
    const { size } = yield* always(
      Rows.findOne({
        Request: Schema.String,
        Result: SizeRow,
        execute: (org) => sql`SELECT size FROM settlement_logs WHERE org_uuid = ${org} FOR UPDATE`
      })(org)
    )
    return size
  })

const setLogSize = (org: string, size: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Rows.void({ Request: Schema.Void, execute: () => sql`UPDATE settlement_logs SET size = ${size} WHERE org_uuid = ${org}` })(undefined)
  )

/**
 * Gives every unsettled receipt of the organization the next leaf index, in
 * (created_at, receipt_uuid) order, inside the database: nothing is loaded here.
 * The period is null when nothing was appended.
 */
const appendUnsettled = (org: string, base: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // The window sort of a large batch stays in memory instead of spilling to disk.
    yield* Rows.void({ Request: Schema.Void, execute: () => sql.unsafe(`SET LOCAL work_mem = '${SORT_MEMORY}'`) })(undefined)
    const row = yield* always(
      Rows.findOne({
        Request: Schema.Void,
        Result: BatchRow,
        execute: () => sql`
      WITH watermark AS (
        SELECT max(r.created_at) - ${LATE_COMMIT_MARGIN}::interval AS since
        FROM settlement_leaves l JOIN receipts r ON r.receipt_uuid = l.receipt_uuid
        WHERE l.org_uuid = ${org} AND l.leaf_index = ${base - 1}
      ),
      pending AS (
        SELECT r.receipt_uuid, r.created_at, r.payload_hash, row_number() OVER (ORDER BY r.created_at, r.receipt_uuid) AS n
        FROM receipts r
        WHERE r.org_uuid = ${org}
          AND r.created_at >= COALESCE((SELECT since FROM watermark), '-infinity'::timestamptz)
          AND NOT EXISTS (SELECT 1 FROM settlement_leaves l WHERE l.receipt_uuid = r.receipt_uuid)
      ),
      appended AS (
        INSERT INTO settlement_leaves (org_uuid, leaf_index, receipt_uuid, payload_digest)
        SELECT ${org}, ${base} + n - 1, receipt_uuid, decode(substr(payload_hash, 8), 'hex') FROM pending
      )
      SELECT count(*) AS appended, min(created_at) AS period_start, max(created_at) AS period_end FROM pending`
      })(undefined)
    )
    return { appended: row.appended, periodStart: row.period_start, periodEnd: row.period_end }
  })

/**
 * The leaves (receipts' payload digests, 32 bytes) at indexes [from, to), in order. They come
 * back concatenated in one row: a page is tens of thousands of leaves, one value to decode.
 */
const leafDigests = (org: string, from: number, to: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { digests } = yield* always(
      Rows.findOne({
        Request: Schema.Void,
        Result: DigestsRow,
        execute: () => sql`
      SELECT string_agg(payload_digest, ''::bytea ORDER BY leaf_index) AS digests FROM settlement_leaves
      WHERE org_uuid = ${org} AND leaf_index >= ${from} AND leaf_index < ${to}`
      })(undefined)
    )
    const leaves: Array<Uint8Array> = []
    if (digests === null) return leaves
    if (digests.length % HASH_SIZE !== 0) return yield* Effect.die(new Error(`settlement log of ${org}: a leaf digest in ${from}..${to} is not ${HASH_SIZE} bytes`))
    for (let at = 0; at < digests.length; at += HASH_SIZE) leaves.push(digests.subarray(at, at + HASH_SIZE))
    return leaves
  })

const readTiles = (org: string, keys: ReadonlyArray<TileKey>) =>
  Effect.gen(function* () {
    const tiles = new Map<string, Uint8Array>()
    if (keys.length === 0) return tiles as Tiles
    const sql = yield* SqlClient.SqlClient
    // Integers we computed, written as a row list so the planner probes the primary key for each.
    const wanted = keys.map((key) => `(${Math.trunc(key.level)}, ${Math.trunc(key.index)})`).join(", ")
    const rows = yield* Rows.findAll({
      Request: Schema.Void,
      Result: TileRow,
      execute: () => sql.unsafe(`SELECT level, tile_index, hashes FROM settlement_tiles WHERE org_uuid = $1 AND (level, tile_index) IN (${wanted})`, [org])
    })(undefined)
    for (const row of rows) tiles.set(tileName(row.level, row.tile_index), new Uint8Array(row.hashes))
    return tiles as Tiles
  })

/** Stores tiles, replacing the shorter earlier version of a tile that grew. */
const writeTiles = (org: string, tiles: ReadonlyArray<WrittenTile>) =>
  Effect.gen(function* () {
    if (tiles.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const packed = tiles.map((tile) => `${tile.level}/${tile.index}/${Buffer.from(tile.hashes).toString("hex")}`).join(",")
    yield* Rows.void({
      Request: Schema.Void,
      execute: () => sql`
      INSERT INTO settlement_tiles (org_uuid, level, tile_index, hashes)
      SELECT ${org}, split_part(t, '/', 1)::int, split_part(t, '/', 2)::bigint, decode(split_part(t, '/', 3), 'hex')
      FROM unnest(string_to_array(${packed}, ',')) AS t
      ON CONFLICT (org_uuid, level, tile_index) DO UPDATE SET hashes = EXCLUDED.hashes`
    })(undefined)
  })

const insertSettlement = (row: SettlementRow) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Rows.void({
      Request: Schema.Void,
      execute: () => sql`
      INSERT INTO settlements (settlement_uuid, org_uuid, previous_size, tree_size, receipt_count, period_start, period_end,
        merkle_root, settlement_hash, signature, signing_key_id, timestamp_token, checkpoint, sealed_at)
      VALUES (${row.settlement_uuid}, ${row.org_uuid}, ${row.previous_size}, ${row.tree_size}, ${row.receipt_count},
        ${row.period_start}, ${row.period_end}, ${row.merkle_root}, ${row.settlement_hash}, ${row.signature},
        ${row.signing_key_id}, ${row.timestamp_token}, ${row.checkpoint}, ${row.sealed_at})`
    })(undefined)
  )

const settlementById = (org: string, settlementUuid: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Rows.findOneOption({
      Request: Schema.Void,
      Result: SettlementRow,
      execute: () => sql`SELECT * FROM settlements WHERE org_uuid = ${org} AND settlement_uuid = ${settlementUuid}`
    })(undefined).pipe(Effect.map(Option.getOrUndefined))
  )

const listSettlements = (org: string, page: number, perPage: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* Rows.findAll({
      Request: Schema.Void,
      Result: SettlementRow,
      execute: () => sql`SELECT * FROM settlements WHERE org_uuid = ${org} ORDER BY tree_size DESC LIMIT ${perPage} OFFSET ${offset(page, perPage)}`
    })(undefined)
    const { total } = yield* always(
      Rows.findOne({
        Request: Schema.Void,
        Result: TotalRow,
        execute: () => sql`SELECT count(*) AS total FROM settlements WHERE org_uuid = ${org}`
      })(undefined)
    )
    return { rows, total }
  })

/** A settled receipt's leaf index and the head of the settlement that sealed it, in one lookup. */
const leafOfReceipt = (org: string, receiptUuid: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const row = yield* Rows.findOneOption({
      Request: Schema.Void,
      Result: LeafRow,
      execute: () => sql`
      SELECT l.leaf_index, s.settlement_uuid, s.tree_size, s.merkle_root
      FROM settlement_leaves l
      JOIN settlements s ON s.org_uuid = l.org_uuid AND l.leaf_index >= s.previous_size AND l.leaf_index < s.tree_size
      WHERE l.org_uuid = ${org} AND l.receipt_uuid = ${receiptUuid}`
    })(undefined)
    return Option.match(row, {
      onNone: () => undefined,
      onSome: (row) => ({ leafIndex: row.leaf_index, settlementUuid: row.settlement_uuid, treeSize: row.tree_size, merkleRoot: row.merkle_root })
    })
  })

const settledReceipts = (org: string, from: number, to: number, limit: number, skip: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Rows.findAll({
      Request: Schema.Void,
      Result: SettledReceiptRow,
      execute: () => sql`
      SELECT r.receipt_uuid, r.action_uuid, a.action_type, r.agent_id, r.payload_hash, r.created_at
      FROM settlement_leaves l
      JOIN receipts r ON r.receipt_uuid = l.receipt_uuid
      LEFT JOIN actions a ON a.action_uuid = r.action_uuid
      WHERE l.org_uuid = ${org} AND l.leaf_index >= ${from + skip} AND l.leaf_index < ${Math.min(to, from + skip + limit)}
      ORDER BY l.leaf_index`
    })(undefined)
  )

/** The settlement log's statements; each joins the transaction of the SqlClient in scope. */
export const settlementStore = sqlDefects({
  lockLog,
  setLogSize,
  appendUnsettled,
  leafDigests,
  readTiles,
  writeTiles,
  insertSettlement,
  settlementById,
  listSettlements,
  leafOfReceipt,
  settledReceipts
})
