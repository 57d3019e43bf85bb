/**
 * Signed explanations: each action keeps the policy evaluations its authorization went through
 * (order, policy, mode, decision, confidence, reasoning, model votes, time), written by the same
 * INSERT that records the action. Actions from before this column have NULL and their explanation
 * infers one entry (CONTRACT.md "Signed explanations").
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`ALTER TABLE actions ADD COLUMN policy_evaluations JSONB`
})
