/**
 * The LLM gateway (CONTRACT-sdk-beyond §6): an organization's gateway settings; the gateway
 * processes alive (a heartbeat each), so a call a crashed process left open can be told from
 * one still streaming elsewhere; and the index the sweep of such calls reads (gateway actions
 * still open, which carry their process in `context.gateway_instance`).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE gateway_settings (
      org_uuid TEXT PRIMARY KEY,
      store_details BOOLEAN NOT NULL DEFAULT false,
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE gateway_instances (
      instance_id TEXT PRIMARY KEY,
      heartbeat_at TIMESTAMPTZ NOT NULL
    )`
  yield* sql`
    CREATE INDEX actions_open_gateway_calls_idx ON actions (created_at)
      WHERE status IN ('authorized', 'approved') AND action_type LIKE 'llm.%' AND context ? 'gateway_instance'`
})
