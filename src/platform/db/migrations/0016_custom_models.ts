/** An organization's own model endpoints; the Authorization value is sealed with the envelope. */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE custom_models (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      name TEXT NOT NULL,
      model_id TEXT NOT NULL,
      endpoint_url TEXT NOT NULL,
      sealed_auth TEXT,
      auth_key_id TEXT,
      request_schema JSONB NOT NULL,
      response_schema JSONB NOT NULL,
      timeout_ms INTEGER NOT NULL,
      status TEXT NOT NULL DEFAULT 'untested',
      last_tested TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ,
      UNIQUE (org_uuid, model_id)
    )`
})
