/** SSO rows: configurations, spent SAML assertion ids, OIDC logins in flight, exchange codes. */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import type { Role } from "../../protocol/auth.js"
import { jsonb } from "../platform/db/index.js"

export interface ConfigRow {
  readonly org_uuid: string
  readonly protocol: "saml" | "oidc" | null
  readonly enforced: boolean
  readonly domains: ReadonlyArray<string>
  readonly idp_entity_id: string | null
  readonly idp_sso_url: string | null
  readonly idp_cert: string | null
  readonly oidc_issuer_url: string | null
  readonly oidc_client_id: string | null
  readonly oidc_client_secret_sealed: string | null
  readonly sp_cert: string
  readonly sp_private_key_sealed: string
}

export interface OrgRow {
  readonly org_uuid: string
  readonly slug: string
  readonly plan: string
}

export interface Protocol {
  readonly protocol: "saml" | "oidc"
  readonly idp_entity_id: string | null
  readonly idp_sso_url: string | null
  readonly idp_cert: string | null
  readonly oidc_issuer_url: string | null
  readonly oidc_client_id: string | null
  readonly oidc_client_secret_sealed: string | null
}

const domainsOf = (value: unknown): ReadonlyArray<string> => (typeof value === "string" ? JSON.parse(value) : ((value as Array<string>) ?? []))

export const makeSsoStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const first = <A>(rows: ReadonlyArray<A>) => rows[0]
  const config = (row: ConfigRow | undefined) => (row === undefined ? undefined : { ...row, domains: domainsOf(row.domains) })

  return {
    sql,
    orgBySlug: (slug: string) => Effect.map(sql<OrgRow>`SELECT org_uuid, slug, plan FROM organizations WHERE slug = ${slug}`, first),
    org: (orgUuid: string) => Effect.map(sql<OrgRow>`SELECT org_uuid, slug, plan FROM organizations WHERE org_uuid = ${orgUuid}`, first),
    ownerEmail: (orgUuid: string) =>
      Effect.map(sql<{ email: string }>`SELECT email FROM users WHERE org_uuid = ${orgUuid} AND role = 'owner' AND deactivated_at IS NULL LIMIT 1`, (rows) => rows[0]?.email),

    config: (orgUuid: string) => Effect.map(sql<ConfigRow>`SELECT * FROM sso_configs WHERE org_uuid = ${orgUuid}`, (rows) => config(rows[0])),

    /** Configured organizations one of whose domains is `domain`. */
    configsForDomain: (domain: string) =>
      Effect.map(
        sql<ConfigRow & { slug: string }>`SELECT c.*, o.slug FROM sso_configs c JOIN organizations o USING (org_uuid)
          WHERE c.protocol IS NOT NULL AND c.domains @> ${jsonb([domain])} ORDER BY c.created_at LIMIT 1`,
        (rows) => (rows[0] === undefined ? undefined : { ...rows[0], domains: domainsOf(rows[0].domains) })
      ),

    /** The SP key pair is made once per organization and kept when the IdP side changes. */
    ensureKeys: (orgUuid: string, spCert: string, sealedKey: string) =>
      sql`INSERT INTO sso_configs (org_uuid, sp_cert, sp_private_key_sealed) VALUES (${orgUuid}, ${spCert}, ${sealedKey})
          ON CONFLICT (org_uuid) DO NOTHING`.pipe(Effect.asVoid),

    setProtocol: (orgUuid: string, protocol: Protocol, domains: ReadonlyArray<string>) =>
      sql`UPDATE sso_configs SET protocol = ${protocol.protocol}, idp_entity_id = ${protocol.idp_entity_id}, idp_sso_url = ${protocol.idp_sso_url},
            idp_cert = ${protocol.idp_cert}, oidc_issuer_url = ${protocol.oidc_issuer_url}, oidc_client_id = ${protocol.oidc_client_id},
            oidc_client_secret_sealed = ${protocol.oidc_client_secret_sealed}, domains = ${jsonb(domains)}, updated_at = now()
          WHERE org_uuid = ${orgUuid}`.pipe(Effect.asVoid),

    setEnforced: (orgUuid: string, enforced: boolean) =>
      Effect.map(
        sql<{ org_uuid: string }>`UPDATE sso_configs SET enforced = ${enforced}, updated_at = now() WHERE org_uuid = ${orgUuid} AND protocol IS NOT NULL RETURNING org_uuid`,
        (rows) => rows.length > 0
      ),

    /** Clears the IdP side (and enforcement); the SP key pair stays so the published metadata does not change. */
    clear: (orgUuid: string) =>
      sql`UPDATE sso_configs SET protocol = NULL, enforced = false, domains = '[]', idp_entity_id = NULL, idp_sso_url = NULL, idp_cert = NULL,
            oidc_issuer_url = NULL, oidc_client_id = NULL, oidc_client_secret_sealed = NULL, updated_at = now() WHERE org_uuid = ${orgUuid}`.pipe(Effect.asVoid),

    /** True the first time an assertion id is seen for the organization; expired ids are swept on the way. */
    spendAssertion: (orgUuid: string, assertionId: string, expiresAt: Date) =>
      Effect.gen(function* () {
        yield* sql`DELETE FROM sso_assertions_seen WHERE expires_at < now() - interval '1 hour'`
        const rows = yield* sql<{ assertion_id: string }>`INSERT INTO sso_assertions_seen (org_uuid, assertion_id, expires_at)
          VALUES (${orgUuid}, ${assertionId}, ${expiresAt}) ON CONFLICT DO NOTHING RETURNING assertion_id`
        return rows.length > 0
      }),

    saveOidcLogin: (row: { stateDigest: string; orgUuid: string; nonce: string; verifierSealed: string; expiresAt: Date }) =>
      sql`DELETE FROM sso_oidc_logins WHERE expires_at < now()`.pipe(Effect.andThen(sql`INSERT INTO sso_oidc_logins (state_digest, org_uuid, nonce, code_verifier_sealed, expires_at)
          VALUES (${row.stateDigest}, ${row.orgUuid}, ${row.nonce}, ${row.verifierSealed}, ${row.expiresAt})`), Effect.asVoid),

    /** Single use: the row goes as it is read. */
    takeOidcLogin: (stateDigest: string) =>
      Effect.map(
        sql<{ org_uuid: string; nonce: string; code_verifier_sealed: string; expires_at: Date }>`DELETE FROM sso_oidc_logins
          WHERE state_digest = ${stateDigest} RETURNING org_uuid, nonce, code_verifier_sealed, expires_at`,
        first
      ),

    // Spent and expired codes are kept an hour (a reuse still reads as used), then swept.
    saveCode: (row: { codeDigest: string; orgUuid: string; userUuid: string; expiresAt: Date }) =>
      sql`DELETE FROM sso_exchange_codes WHERE expires_at < now() - interval '1 hour'`.pipe(Effect.andThen(sql`INSERT INTO sso_exchange_codes (code_digest, org_uuid, user_uuid, expires_at)
          VALUES (${row.codeDigest}, ${row.orgUuid}, ${row.userUuid}, ${row.expiresAt})`), Effect.asVoid),

    /** Marks the code used if it is unused and unexpired; one caller wins. */
    spendCode: (codeDigest: string) =>
      Effect.map(
        sql<{ org_uuid: string; user_uuid: string }>`UPDATE sso_exchange_codes SET used_at = now()
          WHERE code_digest = ${codeDigest} AND used_at IS NULL AND expires_at > now() RETURNING org_uuid, user_uuid`,
        first
      ),

    activeUser: (userUuid: string, orgUuid: string) =>
      Effect.map(
        sql<{ user_uuid: string; org_uuid: string; email: string; role: Role }>`SELECT user_uuid, org_uuid, email, role FROM users
          WHERE user_uuid = ${userUuid} AND org_uuid = ${orgUuid} AND deactivated_at IS NULL`,
        first
      ),

    userByEmail: (email: string) =>
      Effect.map(
        sql<{ user_uuid: string; org_uuid: string; email: string; role: Role }>`SELECT user_uuid, org_uuid, email, role FROM users
          WHERE lower(email) = lower(${email}) AND deactivated_at IS NULL`,
        first
      ),

    createMember: (user: { userUuid: string; orgUuid: string; email: string; name: string | null; passwordHash: string }) =>
      sql`INSERT INTO users (user_uuid, org_uuid, email, name, password_hash, role)
          VALUES (${user.userUuid}, ${user.orgUuid}, ${user.email}, ${user.name}, ${user.passwordHash}, 'member')`.pipe(Effect.asVoid),

    /** Whether password login is closed for this user: their organization enforces SSO for their domain. */
    enforcedFor: (orgUuid: string, email: string) =>
      Effect.map(
        sql<{ enforced: boolean }>`SELECT enforced FROM sso_configs WHERE org_uuid = ${orgUuid} AND enforced AND protocol IS NOT NULL
          AND domains @> ${jsonb([email.slice(email.lastIndexOf("@") + 1).toLowerCase()])}`,
        (rows) => rows.length > 0
      )
  }
})
