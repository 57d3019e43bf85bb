/**
 * Code review and GitHub (CONTRACT-sdk-beyond §7): an organization's GitHub configuration (the API
 * token and webhook secret sealed with the envelope, the API address when not the default, the
 * auto-merge settings) and its repositories, one row each under the lower-cased `owner/repo`, so a
 * repository belongs to one organization at most and the webhook finds its organization by key.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE github_configs (
      org_uuid TEXT PRIMARY KEY REFERENCES organizations (org_uuid) ON DELETE CASCADE,
      api_token_sealed TEXT,
      webhook_secret_sealed TEXT NOT NULL,
      api_base_url TEXT,
      auto_merge JSONB NOT NULL DEFAULT '{}',
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE github_repositories (
      repository_key TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL REFERENCES github_configs (org_uuid) ON DELETE CASCADE,
      full_name TEXT NOT NULL,
      position INTEGER NOT NULL
    )`
  yield* sql`CREATE INDEX github_repositories_org_idx ON github_repositories (org_uuid, position)`
})
