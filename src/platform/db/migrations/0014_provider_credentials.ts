/**
 * Organizations' model provider credentials: the secret fields sealed with the envelope (with the
 * key id, to re-seal after a master-key rotation); region and endpoint kept in clear for the
 * status list.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE provider_credentials (
      org_uuid TEXT NOT NULL,
      slug TEXT NOT NULL,
      sealed TEXT NOT NULL,
      key_id TEXT NOT NULL,
      region TEXT,
      endpoint TEXT,
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (org_uuid, slug)
    )`
})
