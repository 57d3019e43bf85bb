/** One `audit_log` row: who did what to which object, with the request that did it. */
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import { jsonb } from "./db/index.js"

export interface AuditEntry {
  /** null for platform-wide events (a signing-key rotation). */
  readonly orgUuid: string | null
  readonly actor: string
  readonly event: string
  readonly target?: string | null
  readonly details?: Record<string, unknown>
  readonly requestId?: string | null
}

export const insertAudit = (sql: SqlClient.SqlClient, entry: AuditEntry) =>
  sql`INSERT INTO audit_log (org_uuid, actor, event, target, details, request_id)
      VALUES (${entry.orgUuid}, ${entry.actor}, ${entry.event}, ${entry.target ?? null}, ${jsonb(entry.details ?? {})}, ${entry.requestId ?? null})`.pipe(
    Effect.asVoid
  )

/** Who an entry names: the user behind the request, or failing that its key. */
export const auditActor = (principal: Pick<Principal, "userUuid" | "keyId">): string => principal.userUuid ?? principal.keyId ?? "unknown"
