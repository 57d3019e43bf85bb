/** SSO rows: configurations, spent SAML assertion ids, OIDC logins in flight, exchange codes. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Roles } from "../../protocol/accounts.js"
import { type AuditEntry, insertAudit } from "../platform/audit.js"
import { Json, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const Protocols = ["saml", "oidc"] as const

const ConfigRow = Schema.Struct({
  org_uuid: Schema.String,
  protocol: Schema.NullOr(Schema.Literals(Protocols)),
  enforced: Schema.Boolean,
  domains: Json(Schema.Array(Schema.String)),
  idp_entity_id: Schema.NullOr(Schema.String),
  idp_sso_url: Schema.NullOr(Schema.String),
  idp_cert: Schema.NullOr(Schema.String),
  oidc_issuer_url: Schema.NullOr(Schema.String),
  oidc_client_id: Schema.NullOr(Schema.String),
  oidc_client_secret_sealed: Schema.NullOr(Schema.String),
  sp_cert: Schema.String,
  sp_private_key_sealed: Schema.String
})
export type ConfigRow = typeof ConfigRow.Type

const DomainConfigRow = Schema.Struct({ ...ConfigRow.fields, slug: Schema.String })

const OrgRow = Schema.Struct({ org_uuid: Schema.String, slug: Schema.String, plan: Schema.String })
export type OrgRow = typeof OrgRow.Type

const SsoUser = Schema.Struct({ user_uuid: Schema.String, org_uuid: Schema.String, email: Schema.String, role: Schema.Literals(Roles) })
const OidcLogin = Schema.Struct({ org_uuid: Schema.String, nonce: Schema.String, code_verifier_sealed: Schema.String, expires_at: Timestamp })
const SpentCode = Schema.Struct({ org_uuid: Schema.String, user_uuid: Schema.String })

const ProtocolFields = Schema.Struct({
  protocol: Schema.Literals(Protocols),
  idp_entity_id: Schema.NullOr(Schema.String),
  idp_sso_url: Schema.NullOr(Schema.String),
  idp_cert: Schema.NullOr(Schema.String),
  oidc_issuer_url: Schema.NullOr(Schema.String),
  oidc_client_id: Schema.NullOr(Schema.String),
  oidc_client_secret_sealed: Schema.NullOr(Schema.String)
})
export type Protocol = typeof ProtocolFields.Type

const OrgAnd = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct({ orgUuid: Schema.String, ...fields })

export const makeSsoStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const one = <A, E, R>(effect: Effect.Effect<Option.Option<A>, E, R>) => Effect.map(effect, Option.getOrUndefined)

  const orgBySlug = Rows.findOneOption({
    Request: Schema.String,
    Result: OrgRow,
    execute: (slug) => sql`SELECT org_uuid, slug, plan FROM organizations WHERE slug = ${slug}`
  })
  const org = Rows.findOneOption({
    Request: Schema.String,
    Result: OrgRow,
    execute: (orgUuid) => sql`SELECT org_uuid, slug, plan FROM organizations WHERE org_uuid = ${orgUuid}`
  })
  const ownerEmail = Rows.findOneOption({
    Request: Schema.String,
    Result: Schema.Struct({ email: Schema.String }),
    execute: (orgUuid) => sql`SELECT email FROM users WHERE org_uuid = ${orgUuid} AND role = 'owner' AND deactivated_at IS NULL LIMIT 1`
  })
  const config = Rows.findOneOption({
    Request: Schema.String,
    Result: ConfigRow,
    execute: (orgUuid) => sql`SELECT * FROM sso_configs WHERE org_uuid = ${orgUuid}`
  })
  const configsForDomain = Rows.findOneOption({
    Request: Schema.String,
    Result: DomainConfigRow,
    execute: (domain) =>
      sql`SELECT c.*, o.slug FROM sso_configs c JOIN organizations o USING (org_uuid)
          WHERE c.protocol IS NOT NULL AND c.domains @> ${jsonb([domain])} ORDER BY c.created_at LIMIT 1`
  })
  const ensureKeys = Rows.void({
    Request: OrgAnd({ spCert: Schema.String, sealedKey: Schema.String }),
    execute: ({ orgUuid, spCert, sealedKey }) =>
      sql`INSERT INTO sso_configs (org_uuid, sp_cert, sp_private_key_sealed) VALUES (${orgUuid}, ${spCert}, ${sealedKey})
          ON CONFLICT (org_uuid) DO NOTHING`
  })
  const setProtocol = Rows.void({
    Request: OrgAnd({ protocol: ProtocolFields, domains: Schema.Array(Schema.String) }),
    execute: ({ orgUuid, protocol, domains }) =>
      sql`UPDATE sso_configs SET protocol = ${protocol.protocol}, idp_entity_id = ${protocol.idp_entity_id}, idp_sso_url = ${protocol.idp_sso_url},
            idp_cert = ${protocol.idp_cert}, oidc_issuer_url = ${protocol.oidc_issuer_url}, oidc_client_id = ${protocol.oidc_client_id},
            oidc_client_secret_sealed = ${protocol.oidc_client_secret_sealed}, domains = ${jsonb(domains)}, updated_at = now()
          WHERE org_uuid = ${orgUuid}`
  })
  const setEnforced = Rows.findOneOption({
    Request: OrgAnd({ enforced: Schema.Boolean }),
    Result: Schema.Struct({ org_uuid: Schema.String }),
    execute: ({ orgUuid, enforced }) =>
      sql`UPDATE sso_configs SET enforced = ${enforced}, updated_at = now() WHERE org_uuid = ${orgUuid} AND protocol IS NOT NULL RETURNING org_uuid`
  })
  const clear = Rows.void({
    Request: Schema.String,
    execute: (orgUuid) =>
      sql`UPDATE sso_configs SET protocol = NULL, enforced = false, domains = '[]', idp_entity_id = NULL, idp_sso_url = NULL, idp_cert = NULL,
            oidc_issuer_url = NULL, oidc_client_id = NULL, oidc_client_secret_sealed = NULL, updated_at = now() WHERE org_uuid = ${orgUuid}`
  })
  const sweepAssertions = Rows.void({
    Request: Schema.Void,
    execute: () => sql`DELETE FROM sso_assertions_seen WHERE expires_at < now() - interval '1 hour'`
  })
  const insertAssertion = Rows.findOneOption({
    Request: OrgAnd({ assertionId: Schema.String, expiresAt: Schema.String }),
    Result: Schema.Struct({ assertion_id: Schema.String }),
    execute: ({ orgUuid, assertionId, expiresAt }) =>
      sql`INSERT INTO sso_assertions_seen (org_uuid, assertion_id, expires_at)
          VALUES (${orgUuid}, ${assertionId}, ${expiresAt}) ON CONFLICT DO NOTHING RETURNING assertion_id`
  })
  const sweepOidcLogins = Rows.void({ Request: Schema.Void, execute: () => sql`DELETE FROM sso_oidc_logins WHERE expires_at < now()` })
  const insertOidcLogin = Rows.void({
    Request: OrgAnd({ stateDigest: Schema.String, nonce: Schema.String, verifierSealed: Schema.String, expiresAt: Schema.String }),
    execute: (row) =>
      sql`INSERT INTO sso_oidc_logins (state_digest, org_uuid, nonce, code_verifier_sealed, expires_at)
          VALUES (${row.stateDigest}, ${row.orgUuid}, ${row.nonce}, ${row.verifierSealed}, ${row.expiresAt})`
  })
  const takeOidcLogin = Rows.findOneOption({
    Request: Schema.String,
    Result: OidcLogin,
    execute: (stateDigest) =>
      sql`DELETE FROM sso_oidc_logins WHERE state_digest = ${stateDigest} RETURNING org_uuid, nonce, code_verifier_sealed, expires_at`
  })
  const sweepCodes = Rows.void({
    Request: Schema.Void,
    execute: () => sql`DELETE FROM sso_exchange_codes WHERE expires_at < now() - interval '1 hour'`
  })
  const insertCode = Rows.void({
    Request: OrgAnd({ codeDigest: Schema.String, userUuid: Schema.String, expiresAt: Schema.String }),
    execute: (row) =>
      sql`INSERT INTO sso_exchange_codes (code_digest, org_uuid, user_uuid, expires_at)
          VALUES (${row.codeDigest}, ${row.orgUuid}, ${row.userUuid}, ${row.expiresAt})`
  })
  const spendCode = Rows.findOneOption({
    Request: Schema.String,
    Result: SpentCode,
    execute: (codeDigest) =>
      sql`UPDATE sso_exchange_codes SET used_at = now()
          WHERE code_digest = ${codeDigest} AND used_at IS NULL AND expires_at > now() RETURNING org_uuid, user_uuid`
  })
  const activeUser = Rows.findOneOption({
    Request: OrgAnd({ userUuid: Schema.String }),
    Result: SsoUser,
    execute: ({ orgUuid, userUuid }) =>
      sql`SELECT user_uuid, org_uuid, email, role FROM users WHERE user_uuid = ${userUuid} AND org_uuid = ${orgUuid} AND deactivated_at IS NULL`
  })
  const userByEmail = Rows.findOneOption({
    Request: Schema.String,
    Result: SsoUser,
    execute: (email) => sql`SELECT user_uuid, org_uuid, email, role FROM users WHERE lower(email) = lower(${email}) AND deactivated_at IS NULL`
  })
  const createMember = Rows.void({
    Request: OrgAnd({ userUuid: Schema.String, email: Schema.String, name: Schema.NullOr(Schema.String), passwordHash: Schema.String }),
    execute: (user) =>
      sql`INSERT INTO users (user_uuid, org_uuid, email, name, password_hash, role)
          VALUES (${user.userUuid}, ${user.orgUuid}, ${user.email}, ${user.name}, ${user.passwordHash}, 'member')`
  })
  const enforcedFor = Rows.findAll({
    Request: OrgAnd({ domain: Schema.String }),
    Result: Schema.Struct({ enforced: Schema.Boolean }),
    execute: ({ orgUuid, domain }) =>
      sql`SELECT enforced FROM sso_configs WHERE org_uuid = ${orgUuid} AND enforced AND protocol IS NOT NULL AND domains @> ${jsonb([domain])}`
  })

  return sqlDefects({
    sql,
    audit: (entry: AuditEntry) => insertAudit(sql, entry),
    orgBySlug: (slug: string) => one(orgBySlug(slug)),
    org: (orgUuid: string) => one(org(orgUuid)),
    ownerEmail: (orgUuid: string) => Effect.map(one(ownerEmail(orgUuid)), (row) => row?.email),

    config: (orgUuid: string) => one(config(orgUuid)),

    /** The first configured organization one of whose domains is `domain`. */
    configsForDomain: (domain: string) => one(configsForDomain(domain)),

    /** The SP key pair is made once per organization and kept when the IdP side changes. */
    ensureKeys: (orgUuid: string, spCert: string, sealedKey: string) => ensureKeys({ orgUuid, spCert, sealedKey }),

    setProtocol: (orgUuid: string, protocol: Protocol, domains: ReadonlyArray<string>) => setProtocol({ orgUuid, protocol, domains }),

    /** False when the organization has no configuration to enforce. */
    setEnforced: (orgUuid: string, enforced: boolean) => Effect.map(setEnforced({ orgUuid, enforced }), Option.isSome),

    /** Clears the IdP side (and enforcement); the SP key pair stays so the published metadata does not change. */
    clear: (orgUuid: string) => clear(orgUuid),

    /** True the first time an assertion id is seen for the organization; expired ids are swept on the way. */
    spendAssertion: (orgUuid: string, assertionId: string, expiresAt: string) =>
      Effect.andThen(sweepAssertions(undefined), Effect.map(insertAssertion({ orgUuid, assertionId, expiresAt }), Option.isSome)),

    saveOidcLogin: (row: { stateDigest: string; orgUuid: string; nonce: string; verifierSealed: string; expiresAt: string }) =>
      Effect.andThen(sweepOidcLogins(undefined), insertOidcLogin(row)),

    /** Single use: the row goes as it is read. */
    takeOidcLogin: (stateDigest: string) => one(takeOidcLogin(stateDigest)),

    // Spent and expired codes are kept an hour (a reuse still reads as used), then swept.
    saveCode: (row: { codeDigest: string; orgUuid: string; userUuid: string; expiresAt: string }) => Effect.andThen(sweepCodes(undefined), insertCode(row)),

    /** Marks the code used if it is unused and unexpired; one caller wins. */
    spendCode: (codeDigest: string) => one(spendCode(codeDigest)),

    activeUser: (userUuid: string, orgUuid: string) => one(activeUser({ orgUuid, userUuid })),

    userByEmail: (email: string) => one(userByEmail(email)),

    createMember: (user: { userUuid: string; orgUuid: string; email: string; name: string | null; passwordHash: string }) => createMember(user),

    /** Whether password login is closed for this user: their organization enforces SSO for their domain. */
    enforcedFor: (orgUuid: string, email: string) =>
      Effect.map(enforcedFor({ orgUuid, domain: email.slice(email.lastIndexOf("@") + 1).toLowerCase() }), (rows) => rows.length > 0)
  })
})
