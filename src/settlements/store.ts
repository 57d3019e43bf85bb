/**
 * SQL of the settlement log. Every function reads the SqlClient when it runs,
 * so a whole settlement (lock, leaves, tiles, head) is one transaction.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Count, Timestamp } from "../platform/columns.js"
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

const rowsOf = <S extends Schema.Top>(Result: S, statement: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => SqlSchema.findAll({ Request: Schema.Void, Result, execute: () => statement(sql) })(undefined))

/** Locks the organization's log head (creating it) and answers its size. */
export const lockLog = (org: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO settlement_logs (org_uuid, size) VALUES (${org}, 0) ON CONFLICT (org_uuid) DO NOTHING`
    const rows = yield* sql<{ size: string | number }>`SELECT size FROM settlement_logs WHERE org_uuid = ${org} FOR UPDATE`
    return Number(rows[0].size)
  })

export const setLogSize = (org: string, size: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE settlement_logs SET size = ${size} WHERE org_uuid = ${org}`)

/**
 * Gives every unsettled receipt of the organization the next leaf index, in
 * (created_at, receipt_uuid) order, inside the database: nothing is loaded here.
 */
export const appendUnsettled = (org: string, base: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // The window sort of a large batch stays in memory instead of spilling to disk.
    yield* sql.unsafe(`SET LOCAL work_mem = '${SORT_MEMORY}'`)
    const rows = yield* sql<{ appended: string | number; period_start: unknown; period_end: unknown }>`
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
    const row = rows[0]
    return { appended: Number(row.appended), periodStart: row.period_start, periodEnd: row.period_end }
  })

/** The leaves (receipts' payload digests, 32 bytes) at indexes [from, to), in order. */
export const leafDigests = (org: string, from: number, to: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ payload_digest: Uint8Array }>`
      SELECT payload_digest FROM settlement_leaves
      WHERE org_uuid = ${org} AND leaf_index >= ${from} AND leaf_index < ${to}
      ORDER BY leaf_index`
    return rows.map((row) => row.payload_digest)
  })

export const readTiles = (org: string, keys: ReadonlyArray<TileKey>) =>
  Effect.gen(function* () {
    const tiles = new Map<string, Uint8Array>()
    if (keys.length === 0) return tiles as Tiles
    const sql = yield* SqlClient.SqlClient
    // Integers we computed, written as a row list so the planner probes the primary key for each.
    const wanted = keys.map((key) => `(${Math.trunc(key.level)}, ${Math.trunc(key.index)})`).join(", ")
    const rows = (yield* sql.unsafe(
      `SELECT level, tile_index, hashes FROM settlement_tiles WHERE org_uuid = $1 AND (level, tile_index) IN (${wanted})`,
      [org]
    )) as ReadonlyArray<{ level: number; tile_index: string | number; hashes: Uint8Array }>
    for (const row of rows) tiles.set(tileName(row.level, Number(row.tile_index)), new Uint8Array(row.hashes))
    return tiles as Tiles
  })

/** Stores tiles, replacing the shorter earlier version of a tile that grew. */
export const writeTiles = (org: string, tiles: ReadonlyArray<WrittenTile>) =>
  Effect.gen(function* () {
    if (tiles.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const packed = tiles.map((tile) => `${tile.level}/${tile.index}/${Buffer.from(tile.hashes).toString("hex")}`).join(",")
    yield* sql`
      INSERT INTO settlement_tiles (org_uuid, level, tile_index, hashes)
      SELECT ${org}, split_part(t, '/', 1)::int, split_part(t, '/', 2)::bigint, decode(split_part(t, '/', 3), 'hex')
      FROM unnest(string_to_array(${packed}, ',')) AS t
      ON CONFLICT (org_uuid, level, tile_index) DO UPDATE SET hashes = EXCLUDED.hashes`
  })

export const insertSettlement = (row: SettlementRow) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      INSERT INTO settlements (settlement_uuid, org_uuid, previous_size, tree_size, receipt_count, period_start, period_end,
        merkle_root, settlement_hash, signature, signing_key_id, timestamp_token, checkpoint, sealed_at)
      VALUES (${row.settlement_uuid}, ${row.org_uuid}, ${row.previous_size}, ${row.tree_size}, ${row.receipt_count},
        ${row.period_start}, ${row.period_end}, ${row.merkle_root}, ${row.settlement_hash}, ${row.signature},
        ${row.signing_key_id}, ${row.timestamp_token}, ${row.checkpoint}, ${row.sealed_at})`
  )

export const settlementById = (org: string, settlementUuid: string) =>
  Effect.map(
    rowsOf(SettlementRow, (sql) => sql`SELECT * FROM settlements WHERE org_uuid = ${org} AND settlement_uuid = ${settlementUuid}`),
    (rows) => rows[0]
  )

export const listSettlements = (org: string, page: number, perPage: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* rowsOf(
      SettlementRow,
      (sql) => sql`SELECT * FROM settlements WHERE org_uuid = ${org} ORDER BY tree_size DESC LIMIT ${perPage} OFFSET ${offset(page, perPage)}`
    )
    const [{ total }] = yield* sql<{ total: string | number }>`SELECT count(*) AS total FROM settlements WHERE org_uuid = ${org}`
    return { rows, total: Number(total) }
  })

/** A settled receipt's leaf index and the head of the settlement that sealed it, in one lookup. */
export const leafOfReceipt = (org: string, receiptUuid: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ leaf_index: string | number; settlement_uuid: string; tree_size: string | number; merkle_root: string }>`
      SELECT l.leaf_index, s.settlement_uuid, s.tree_size, s.merkle_root
      FROM settlement_leaves l
      JOIN settlements s ON s.org_uuid = l.org_uuid AND l.leaf_index >= s.previous_size AND l.leaf_index < s.tree_size
      WHERE l.org_uuid = ${org} AND l.receipt_uuid = ${receiptUuid}`
    const row = rows[0]
    return row === undefined
      ? undefined
      : { leafIndex: Number(row.leaf_index), settlementUuid: row.settlement_uuid, treeSize: Number(row.tree_size), merkleRoot: row.merkle_root }
  })

export const settledReceipts = (org: string, from: number, to: number, limit: number, skip: number) =>
  rowsOf(
    SettledReceiptRow,
    (sql) => sql`
      SELECT r.receipt_uuid, r.action_uuid, a.action_type, r.agent_id, r.payload_hash, r.created_at
      FROM settlement_leaves l
      JOIN receipts r ON r.receipt_uuid = l.receipt_uuid
      LEFT JOIN actions a ON a.action_uuid = r.action_uuid
      WHERE l.org_uuid = ${org} AND l.leaf_index >= ${from + skip} AND l.leaf_index < ${Math.min(to, from + skip + limit)}
      ORDER BY l.leaf_index`
  )
