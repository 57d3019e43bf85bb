/**
 * Single sign-on: one configuration per organization (SAML or OIDC), the SAML assertion ids
 * already spent (replay cache shared by every node), OIDC logins in flight (state, nonce, PKCE
 * verifier), and the one-time exchange codes (kept only as keyed digests).
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE sso_configs (
      org_uuid TEXT PRIMARY KEY REFERENCES organizations (org_uuid) ON DELETE CASCADE,
      protocol TEXT CHECK (protocol IN ('saml', 'oidc')),
      enforced BOOLEAN NOT NULL DEFAULT false,
      domains JSONB NOT NULL DEFAULT '[]',
      idp_entity_id TEXT,
      idp_sso_url TEXT,
      idp_cert TEXT,
      oidc_issuer_url TEXT,
      oidc_client_id TEXT,
      oidc_client_secret_sealed TEXT,
      sp_cert TEXT NOT NULL,
      sp_private_key_sealed TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE sso_assertions_seen (
      org_uuid TEXT NOT NULL,
      assertion_id TEXT NOT NULL,
      expires_at TIMESTAMPTZ NOT NULL,
      PRIMARY KEY (org_uuid, assertion_id)
    )`
  yield* sql`CREATE INDEX sso_assertions_seen_expires_idx ON sso_assertions_seen (expires_at)`
  yield* sql`
    CREATE TABLE sso_oidc_logins (
      state_digest TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      nonce TEXT NOT NULL,
      code_verifier_sealed TEXT NOT NULL,
      expires_at TIMESTAMPTZ NOT NULL
    )`
  yield* sql`CREATE INDEX sso_oidc_logins_expires_idx ON sso_oidc_logins (expires_at)`
  yield* sql`
    CREATE TABLE sso_exchange_codes (
      code_digest TEXT PRIMARY KEY,
      org_uuid TEXT NOT NULL,
      user_uuid TEXT NOT NULL,
      expires_at TIMESTAMPTZ NOT NULL,
      used_at TIMESTAMPTZ
    )`
  yield* sql`CREATE INDEX sso_exchange_codes_expires_idx ON sso_exchange_codes (expires_at)`
})
