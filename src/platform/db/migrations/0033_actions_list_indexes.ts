/**
 * The actions list (`GET /actions`, `GET /agents/{slug}/actions`) pages by `created_at DESC,
 * action_uuid DESC`. The 0004 indexes stop at `created_at`, so every page re-sorted its rows and
 * a deep page sorted all rows before its offset. These carry the whole order, so a page is one
 * index scan. They replace the 0004 ones: same leading columns, so every query that used those
 * (org or org+agent, optionally a `created_at` range) uses these, and authorize keeps the same
 * number of indexes to write.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`CREATE INDEX actions_org_agent_list_idx ON actions (org_uuid, agent_id, created_at DESC, action_uuid DESC)`
  yield* sql`CREATE INDEX actions_org_list_idx ON actions (org_uuid, created_at DESC, action_uuid DESC)`
  yield* sql`DROP INDEX actions_org_agent_idx`
  yield* sql`DROP INDEX actions_org_created_idx`
})
