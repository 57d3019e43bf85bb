/**
 * Compliance bundles (CONTRACT-sdk-beyond §4): a period's receipts sealed into an RFC 9162 tree of
 * their own. `compliance_bundles` holds the claim (`sealing`, which holds the idempotency key while
 * the request runs) and then the sealed bundle with the exact signed JCS text; `_leaves` fixes which
 * receipt sits at which index (a receipt committed late can never move into a sealed bundle) with
 * its payload digest; `_tiles` holds the tree as the settlement log's 256-hash tiles, so a proof
 * reads a handful of rows. Leaves are stored 512 to a row (their receipt ids and concatenated
 * digests): a row per leaf cost more to insert than the whole tree to build. Every table carries
 * `org_uuid`, so account deletion removes them.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE compliance_bundles (
      bundle_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('sealing', 'sealed')),
      framework TEXT NOT NULL,
      idempotency_key TEXT,
      request_hash TEXT NOT NULL,
      created_by TEXT NOT NULL,
      claimed_at TIMESTAMPTZ NOT NULL,
      receipt_count BIGINT,
      signed_record TEXT,
      bundle_hash TEXT,
      signature TEXT,
      public_key_id TEXT,
      sealed_at TIMESTAMPTZ
    )`
  yield* sql`CREATE UNIQUE INDEX compliance_bundles_key_idx ON compliance_bundles (org_uuid, idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX compliance_bundles_org_sealed_idx ON compliance_bundles (org_uuid, sealed_at DESC, bundle_uuid DESC) WHERE status = 'sealed'`
  yield* sql`
    CREATE TABLE compliance_bundle_leaves (
      bundle_uuid TEXT NOT NULL REFERENCES compliance_bundles (bundle_uuid) ON DELETE CASCADE,
      chunk INTEGER NOT NULL,
      org_uuid TEXT NOT NULL,
      receipt_uuids TEXT[] NOT NULL,
      digests BYTEA NOT NULL,
      PRIMARY KEY (bundle_uuid, chunk)
    )`
  yield* sql`
    CREATE TABLE compliance_bundle_tiles (
      bundle_uuid TEXT NOT NULL REFERENCES compliance_bundles (bundle_uuid) ON DELETE CASCADE,
      level INTEGER NOT NULL,
      tile_index BIGINT NOT NULL,
      org_uuid TEXT NOT NULL,
      hashes BYTEA NOT NULL,
      PRIMARY KEY (bundle_uuid, level, tile_index)
    )`
})
