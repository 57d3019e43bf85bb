/** Per-organization model preferences: disabled models per feature, chat default and allow-list, code review default. */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE model_preferences (
      org_uuid TEXT PRIMARY KEY,
      disabled JSONB NOT NULL DEFAULT '{}',
      chat_default TEXT,
      chat_allowed JSONB,
      code_review_default TEXT,
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
})
