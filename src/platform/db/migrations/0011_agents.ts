/**
 * The agent registry. Slugs are the primary key: unique across organizations, because the
 * agent's did:web holds only the slug. `org_uuid` is the current owner (a transfer moves it).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE agents (
      agent_slug TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      name TEXT NOT NULL,
      description TEXT,
      capabilities JSONB NOT NULL DEFAULT '[]',
      metadata JSONB NOT NULL DEFAULT '{}',
      status TEXT NOT NULL CHECK (status IN ('active', 'decommissioned')),
      current_version TEXT,
      decommissioned_at TIMESTAMPTZ,
      decommission_reason TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX agents_org_idx ON agents (org_uuid, created_at DESC, agent_slug)`
  yield* sql`
    CREATE TABLE agent_versions (
      agent_slug TEXT NOT NULL REFERENCES agents (agent_slug) ON DELETE CASCADE,
      version TEXT NOT NULL,
      instruction_hash TEXT NOT NULL,
      changelog TEXT,
      published_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (agent_slug, version)
    )`
  yield* sql`CREATE INDEX agent_versions_published_idx ON agent_versions (agent_slug, published_at DESC)`
})
