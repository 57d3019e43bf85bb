/** SQL for cleaned files awaiting download (table `sanitized_files`, migration 0023). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { type AuditEntry, insertAudit } from "../../platform/audit.js"
import { Count } from "../../platform/columns.js"
import * as Rows from "../../platform/db/rows.js"
import { sqlDefects } from "../../platform/db/store.js"
import { FILE_TYPES } from "./detect.js"

const StoredFile = Schema.Struct({
  tokenDigest: Schema.String,
  orgUuid: Schema.String,
  fileType: Schema.Literals(FILE_TYPES),
  originalFilename: Schema.String,
  sealedContent: Schema.String,
  /** ISO 8601. */
  expiresAt: Schema.String
})
export type StoredFile = typeof StoredFile.Type

const ConsumedRow = Schema.Struct({ file_type: Schema.Literals(FILE_TYPES), original_filename: Schema.String, sealed_content: Schema.String })

export const makeSanitizedFileStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insert = Rows.void({
    Request: StoredFile,
    execute: (file) =>
      sql`INSERT INTO sanitized_files (token_digest, org_uuid, file_type, original_filename, sealed_content, expires_at)
          VALUES (${file.tokenDigest}, ${file.orgUuid}, ${file.fileType}, ${file.originalFilename}, ${file.sealedContent}, ${file.expiresAt})`
  })
  const consume = Rows.findOneOption({
    Request: Schema.String,
    Result: ConsumedRow,
    execute: (tokenDigest) =>
      sql`DELETE FROM sanitized_files WHERE token_digest = ${tokenDigest} AND expires_at > now()
          RETURNING file_type, original_filename, sealed_content`
  })
  const sweep = Rows.findOne({
    Request: Schema.Void,
    Result: Schema.Struct({ n: Count }),
    execute: () => sql`WITH gone AS (DELETE FROM sanitized_files WHERE expires_at <= now() RETURNING 1) SELECT count(*) AS n FROM gone`
  })

  return sqlDefects({
    insert,
    /** Single use: the row is deleted by the read that returns it, so two downloads cannot both win. */
    consume: (tokenDigest: string) => Effect.map(consume(tokenDigest), Option.getOrUndefined),
    /** Drops expired files; answers how many. */
    sweep: sweep(undefined).pipe(
      Effect.map(({ n }) => n),
      // COUNT(*) always answers one row.
      Effect.catchTag("NoSuchElementError", Effect.die)
    ),
    audit: (entry: AuditEntry) => insertAudit(sql, entry)
  })
})
