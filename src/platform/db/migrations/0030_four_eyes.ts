/**
 * Four eyes (CONTRACT.md): each action remembers the user whose credential (API key or JWT)
 * authorized it, so that a member never decides on or cosigns their own action, and whether a
 * policy demanded the approval, in which case the approvers the request names are added to the
 * organization's approvers instead of replacing them. Older actions have NULL / false: their
 * authorizer is unknown and their named approvers keep replacing the defaults.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`ALTER TABLE actions ADD COLUMN authorized_by TEXT, ADD COLUMN approval_by_policy BOOLEAN NOT NULL DEFAULT false`
})
