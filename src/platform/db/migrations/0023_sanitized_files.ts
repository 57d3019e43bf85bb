/**
 * Cleaned files waiting for their one download (spec "Sanitized file token"): keyed by the keyed
 * digest of the download token (the token itself is never stored), the bytes sealed with the
 * master-key envelope, gone after the first download or an hour (the sweeper uses the index).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE sanitized_files (
      token_digest TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      file_type TEXT NOT NULL,
      original_filename TEXT NOT NULL,
      sealed_content TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      expires_at TIMESTAMPTZ NOT NULL
    )`
  yield* sql`CREATE INDEX sanitized_files_expiry ON sanitized_files (expires_at)`
})
