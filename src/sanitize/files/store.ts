/** SQL for cleaned files awaiting download (table `sanitized_files`, migration 0023). */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { type AuditEntry, insertAudit } from "../../platform/audit.js"

export interface StoredFile {
  readonly tokenDigest: string
  readonly orgUuid: string
  readonly fileType: string
  readonly originalFilename: string
  readonly sealedContent: string
  readonly expiresAt: Date
}

export const makeSanitizedFileStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    insert: (file: StoredFile) =>
      sql`INSERT INTO sanitized_files (token_digest, org_uuid, file_type, original_filename, sealed_content, expires_at)
          VALUES (${file.tokenDigest}, ${file.orgUuid}, ${file.fileType}, ${file.originalFilename}, ${file.sealedContent}, ${file.expiresAt})`.pipe(Effect.asVoid),
    /** Single use: the row is deleted by the read that returns it, so two downloads cannot both win. */
    consume: (tokenDigest: string) =>
      Effect.map(
        sql<{ file_type: string; original_filename: string; sealed_content: string }>`
          DELETE FROM sanitized_files WHERE token_digest = ${tokenDigest} AND expires_at > now()
          RETURNING file_type, original_filename, sealed_content`,
        (rows) => rows[0]
      ),
    /** Drops expired files; answers how many. */
    sweep: Effect.map(sql<{ n: string | number }>`WITH gone AS (DELETE FROM sanitized_files WHERE expires_at <= now() RETURNING 1) SELECT count(*) AS n FROM gone`, (rows) =>
      Number(rows[0]?.n ?? 0)
    ),
    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  }
})
