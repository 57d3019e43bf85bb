/**
 * Endpoint approvals grant the blocked request once (CONTRACT.md "Endpoint approvals"): each
 * request records the action type it blocked; approving it opens a single-use grant for the same
 * agent, action type and URL until `grant_expires_at`, spent (`grant_used_at`) by the authorize
 * it lets through. Requests filed before this migration have no action type and grant nothing.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`ALTER TABLE endpoint_approvals ADD COLUMN action_type TEXT, ADD COLUMN grant_expires_at TIMESTAMPTZ, ADD COLUMN grant_used_at TIMESTAMPTZ`
  yield* sql`CREATE INDEX endpoint_approvals_open_grants ON endpoint_approvals (org_uuid, url) WHERE status = 'approved' AND grant_used_at IS NULL`
})
