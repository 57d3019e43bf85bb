/**
 * Settlements: each organization's receipts appended to one RFC 9162 Merkle log.
 * `settlement_logs` is the log head (its row lock serializes appends);
 * `settlement_leaves` says which receipt sits at which index (a receipt is
 * settled once: unique) and keeps its payload digest, so sealing reads one table; `settlement_tiles` holds the tree as 256-hash tiles of
 * complete subtrees; `settlements` are the signed tree heads.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE settlement_logs (
      org_uuid TEXT PRIMARY KEY,
      size BIGINT NOT NULL DEFAULT 0
    )`
  yield* sql`
    CREATE TABLE settlement_leaves (
      org_uuid TEXT NOT NULL,
      leaf_index BIGINT NOT NULL,
      receipt_uuid TEXT NOT NULL UNIQUE,
      payload_digest BYTEA NOT NULL,
      PRIMARY KEY (org_uuid, leaf_index)
    )`
  yield* sql`
    CREATE TABLE settlement_tiles (
      org_uuid TEXT NOT NULL,
      level INTEGER NOT NULL,
      tile_index BIGINT NOT NULL,
      hashes BYTEA NOT NULL,
      PRIMARY KEY (org_uuid, level, tile_index)
    )`
  yield* sql`
    CREATE TABLE settlements (
      settlement_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      previous_size BIGINT NOT NULL,
      tree_size BIGINT NOT NULL,
      receipt_count BIGINT NOT NULL,
      period_start TIMESTAMPTZ NOT NULL,
      period_end TIMESTAMPTZ NOT NULL,
      merkle_root TEXT NOT NULL,
      settlement_hash TEXT NOT NULL,
      signature TEXT NOT NULL,
      signing_key_id TEXT NOT NULL,
      timestamp_token TEXT,
      checkpoint TEXT NOT NULL,
      sealed_at TIMESTAMPTZ NOT NULL,
      UNIQUE (org_uuid, tree_size)
    )`
  yield* sql`CREATE INDEX settlements_org_sealed_idx ON settlements (org_uuid, sealed_at DESC, settlement_uuid)`
})
