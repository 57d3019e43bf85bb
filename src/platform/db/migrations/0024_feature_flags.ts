/**
 * Feature flags (spec 002 "Feature flag"). The flag itself is platform-wide; its
 * `enabled_org_ids` list lives in its own table keyed by `org_uuid`, so deleting an
 * organization takes it off every list like any other organization row.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE feature_flags (
      id TEXT PRIMARY KEY,
      key TEXT NOT NULL UNIQUE,
      description TEXT,
      enabled_global BOOLEAN NOT NULL DEFAULT false,
      rollout_percentage INTEGER NOT NULL DEFAULT 100 CHECK (rollout_percentage BETWEEN 0 AND 100),
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE feature_flag_orgs (
      flag_id TEXT NOT NULL REFERENCES feature_flags (id) ON DELETE CASCADE,
      org_uuid TEXT NOT NULL,
      added_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (flag_id, org_uuid)
    )`
  yield* sql`CREATE INDEX feature_flag_orgs_org ON feature_flag_orgs (org_uuid)`
})
