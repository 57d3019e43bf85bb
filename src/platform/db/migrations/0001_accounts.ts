/**
 * Accounts: organizations, their users, API keys, invites and the audit log.
 * Ids are the spec's prefixed ids or uuids, stored as TEXT. Rate limits live in
 * Redis (or its in-process stand-in), not here.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE organizations (
      org_uuid TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      slug TEXT NOT NULL UNIQUE,
      plan TEXT NOT NULL DEFAULT 'self_hosted'
        CHECK (plan IN ('starter', 'pro', 'business', 'enterprise', 'self_hosted')),
      default_approvers JSONB NOT NULL DEFAULT '[]',
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`

  yield* sql`
    CREATE TABLE users (
      user_uuid TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL REFERENCES organizations (org_uuid) ON DELETE CASCADE,
      email TEXT NOT NULL,
      name TEXT,
      password_hash TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      deactivated_at TIMESTAMPTZ
    )`
  // Login is by e-mail alone, so an address belongs to at most one active user;
  // a member who left frees it for a new registration.
  yield* sql`CREATE UNIQUE INDEX users_active_email_key ON users (lower(email)) WHERE deactivated_at IS NULL`
  yield* sql`CREATE INDEX users_org_created_idx ON users (org_uuid, created_at)`

  yield* sql`
    CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL REFERENCES organizations (org_uuid) ON DELETE CASCADE,
      user_uuid TEXT REFERENCES users (user_uuid) ON DELETE SET NULL,
      name TEXT NOT NULL,
      key_prefix TEXT NOT NULL,
      key_hash TEXT NOT NULL UNIQUE,
      scopes JSONB NOT NULL DEFAULT '["*"]',
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      expires_at TIMESTAMPTZ,
      revoked_at TIMESTAMPTZ,
      last_used_at TIMESTAMPTZ
    )`
  yield* sql`CREATE INDEX api_keys_org_created_idx ON api_keys (org_uuid, created_at)`

  yield* sql`
    CREATE TABLE invites (
      invite_code TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL REFERENCES organizations (org_uuid) ON DELETE CASCADE,
      email TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
      created_by TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      expires_at TIMESTAMPTZ NOT NULL,
      accepted_at TIMESTAMPTZ
    )`
  yield* sql`CREATE INDEX invites_org_created_idx ON invites (org_uuid, created_at)`
  yield* sql`CREATE INDEX invites_email_idx ON invites (lower(email)) WHERE accepted_at IS NULL`

  // No foreign key on org_uuid: platform events (and events of deleted
  // organizations) must stay in the log.
  yield* sql`
    CREATE TABLE audit_log (
      id BIGSERIAL PRIMARY KEY,
      org_uuid TEXT,
      actor TEXT NOT NULL,
      event TEXT NOT NULL,
      target TEXT,
      details JSONB NOT NULL DEFAULT '{}',
      request_id TEXT,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX audit_log_org_created_idx ON audit_log (org_uuid, created_at)`
})
