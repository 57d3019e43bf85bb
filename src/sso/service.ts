/**
 * Single sign-on: the owner's configuration (SAML or OIDC, Business plan or higher), the public
 * browser flow that ends in a one-time exchange code, and the exchange of that code for a JWT.
 * Browser steps answer the address to redirect to, never an error: the spec has them carry
 * `error=` in the redirect instead.
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import type { SsoConfiguration } from "../../protocol/sso.js"
import { issueJwt, JWT_LIFETIME_SECONDS } from "../access/credentials.js"
import { Config } from "../platform/config.js"
import { hmacSha256Hex } from "../platform/hmac.js"
import { newUuid } from "../platform/ids.js"
import { Outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { ConfigInvalid, ExchangeRefused, MetadataNotFound, NotConfigured, PlanRequired, type RedirectError, refuse, type SsoError, SsoOwnerOnly } from "./errors.js"
import { authorizationUrl, credentialsAccepted, discover, randomSecret, randomVerifier, redeem } from "./oidc.js"
import { assertionFacts, CLOCK_SKEW_MS, makeSpKeyPair, readIdpMetadata, samlFor } from "./saml.js"
import { type ConfigRow, makeSsoStore, type OrgRow } from "./store.js"

/** An exchange code lives one minute: the frontend spends it right after the redirect. */
const CODE_LIFETIME_MS = 60_000
/** A user has ten minutes at the identity provider between our redirect and the callback. */
const OIDC_LOGIN_LIFETIME_MS = 10 * 60_000
const DISCOVERY_CACHE_MS = 5 * 60_000
const SSO_PLANS = new Set(["business", "enterprise", "self_hosted"])
/** Not a scrypt hash, so no password ever matches it: users made by SSO sign in through SSO. */
const NO_PASSWORD = "sso$no-password"

const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1).toLowerCase()

export interface AuditContext {
  readonly requestId: string
}

export const makeSso = Effect.gen(function* () {
  const config = yield* Config
  const secrets = yield* Secrets
  const store = yield* makeSsoStore
  const { envelope } = secrets
  const base = config.baseUrl
  const reach = {
    policy: (yield* Outbound).policy,
    ca: config.outboundCaFile === undefined ? undefined : readFileSync(config.outboundCaFile)
  }

  const spEntityId = (slug: string) => `${base}/api/v1/auth/sso/metadata/${encodeURIComponent(slug)}`
  const acsUrl = `${base}/api/v1/auth/sso/acs`
  const oidcCallbackUrl = `${base}/api/v1/auth/sso/oidc/callback`
  const frontend = (query: { code: string } | { error: RedirectError }) => `${base}/dashboard/sso/callback?${new URLSearchParams(query)}`
  const digest = (purpose: string, value: string) => hmacSha256Hex(secrets.pepper, `sso-${purpose}:${value}`)
  const keyAad = (orgUuid: string) => `sso_sp_key:${orgUuid}`
  const secretAad = (orgUuid: string) => `sso_client_secret:${orgUuid}`

  const view = (row: ConfigRow | undefined, org: OrgRow): SsoConfiguration => {
    const on = row?.protocol !== undefined && row.protocol !== null
    return {
      enabled: on,
      enforced: on && row.enforced,
      protocol: on ? row.protocol : null,
      idp_entity_id: on ? row.idp_entity_id : null,
      sp_entity_id: on ? spEntityId(org.slug) : null,
      sp_acs_url: on && row.protocol === "saml" ? acsUrl : null,
      sp_metadata_url: on ? spEntityId(org.slug) : null,
      oidc_issuer_url: on ? row.oidc_issuer_url : null,
      oidc_client_id: on ? row.oidc_client_id : null,
      domains: on ? [...row.domains] : []
    }
  }

  // A principal's organization exists while its credential is accepted.
  const orgOf = (principal: Principal) =>
    Effect.flatMap(store.org(principal.orgUuid), (org) => (org === undefined ? Effect.die(new Error(`Organization ${principal.orgUuid} vanished`)) : Effect.succeed(org)))

  const requireOwner = (principal: Principal) => (principal.role === "owner" ? Effect.void : refuse(new SsoOwnerOnly({})))

  /** The organization's current plan decides, in either deployment mode (self-hosted organizations start on `self_hosted`). */
  const requirePlan = (org: OrgRow) => (SSO_PLANS.has(org.plan) ? Effect.void : refuse(PlanRequired.of(org.plan)))

  // `ensureKeys` made the row, so a configuration is there to read.
  const configOf = (org: OrgRow) =>
    Effect.flatMap(store.config(org.org_uuid), (row) => (row === undefined ? Effect.die(new Error(`No SSO row for ${org.org_uuid}`)) : Effect.succeed(row)))

  /** The owner's domain, plus the ones asked for; a domain another organization already uses is refused (the owner's is skipped). */
  const domainsFor = (org: OrgRow, asked: ReadonlyArray<string> | undefined) =>
    Effect.gen(function* () {
      const explicit = [...new Set((asked ?? []).map((d) => d.toLowerCase()))]
      for (const domain of explicit) {
        const holder = yield* store.configsForDomain(domain)
        if (holder !== undefined && holder.org_uuid !== org.org_uuid) return yield* refuse(ConfigInvalid.of(`the domain ${domain} is used by another organization`))
      }
      const owner = yield* store.ownerEmail(org.org_uuid)
      if (owner !== undefined) {
        const domain = domainOf(owner)
        const holder = yield* store.configsForDomain(domain)
        if ((holder === undefined || holder.org_uuid === org.org_uuid) && !explicit.includes(domain)) explicit.unshift(domain)
      }
      return explicit
    })

  const ensureKeys = (org: OrgRow) =>
    Effect.gen(function* () {
      if ((yield* store.config(org.org_uuid)) !== undefined) return
      const now = yield* Clock.currentTimeMillis
      const pair = yield* Effect.promise(() => makeSpKeyPair(`${org.slug} SSO service provider`, now))
      yield* store.ensureKeys(org.org_uuid, pair.certPem, envelope.seal(pair.keyPem, keyAad(org.org_uuid)))
    })

  const discoveries = new Map<string, { at: number; configuration: Promise<Awaited<ReturnType<typeof discover>>> }>()
  const discovered = (row: ConfigRow, now: number) => {
    const key = `${row.org_uuid}\n${row.oidc_issuer_url}\n${row.oidc_client_id}`
    const cached = discoveries.get(key)
    if (cached !== undefined && now - cached.at < DISCOVERY_CACHE_MS) return cached.configuration
    const clientSecret = envelope.openText(row.oidc_client_secret_sealed!, secretAad(row.org_uuid))
    const configuration = discover({ issuerUrl: row.oidc_issuer_url!, clientId: row.oidc_client_id!, clientSecret }, reach)
    discoveries.set(key, { at: now, configuration })
    configuration.catch(() => discoveries.delete(key))
    return configuration
  }
  const forget = (orgUuid: string) => {
    for (const key of discoveries.keys()) if (key.startsWith(`${orgUuid}\n`)) discoveries.delete(key)
  }

  const audit = (principal: Principal, event: string, details: Record<string, unknown>, context: AuditContext) =>
    store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event, target: principal.orgUuid, details, requestId: context.requestId })

  const spOf = (org: OrgRow, row: ConfigRow) => ({
    entityId: spEntityId(org.slug),
    acsUrl,
    certPem: row.sp_cert,
    keyPem: envelope.openText(row.sp_private_key_sealed, keyAad(org.org_uuid))
  })

  const samlOf = (org: OrgRow, row: ConfigRow) =>
    samlFor(spOf(org, row), { entityId: row.idp_entity_id, ssoUrl: row.idp_sso_url!, certs: JSON.parse(row.idp_cert!) as Array<string> })

  /** The user behind a verified identity: found in the organization, or created as a member; undefined if the e-mail belongs elsewhere. */
  const userFor = (org: OrgRow, row: ConfigRow, email: string, name: string | null) =>
    Effect.gen(function* () {
      if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email) || !row.domains.includes(domainOf(email))) return undefined
      const existing = yield* store.userByEmail(email)
      if (existing !== undefined) return existing.org_uuid === org.org_uuid ? existing.user_uuid : undefined
      const userUuid = newUuid()
      yield* store.createMember({ userUuid, orgUuid: org.org_uuid, email, name, passwordHash: NO_PASSWORD })
      yield* store.audit({ orgUuid: org.org_uuid, actor: email, event: "user.registered", target: userUuid, details: { role: "member", via: "sso" } })
      return userUuid
    })

  const codeFor = (orgUuid: string, userUuid: string, email: string, protocol: "saml" | "oidc") =>
    Effect.gen(function* () {
      yield* store.audit({ orgUuid, actor: email, event: "sso.login", target: userUuid, details: { protocol } })
      const code = randomBytes(32).toString("base64url")
      const now = yield* Clock.currentTimeMillis
      yield* store.saveCode({ codeDigest: digest("code", code), orgUuid, userUuid, expiresAt: new Date(now + CODE_LIFETIME_MS).toISOString() })
      return frontend({ code })
    })

  const configuredOrg = (slug: string, protocol?: "saml" | "oidc") =>
    Effect.gen(function* () {
      const org = yield* store.orgBySlug(slug)
      if (org === undefined) return { error: "org_not_found" as const }
      const row = yield* store.config(org.org_uuid)
      if (row?.protocol == null || (protocol !== undefined && row.protocol !== protocol)) return { error: "sso_not_configured" as const }
      return { error: undefined, org, row }
    })

  const oidcStart = (org: OrgRow, row: ConfigRow) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const configuration = yield* Effect.tryPromise(() => discovered(row, now))
      const state = randomSecret()
      const nonce = randomSecret()
      const verifier = randomVerifier()
      const stateDigest = digest("state", state)
      yield* store.saveOidcLogin({
        stateDigest,
        orgUuid: org.org_uuid,
        nonce,
        verifierSealed: envelope.seal(verifier, `sso_oidc_verifier:${stateDigest}`),
        expiresAt: new Date(now + OIDC_LOGIN_LIFETIME_MS).toISOString()
      })
      return yield* Effect.tryPromise(() => authorizationUrl(configuration, oidcCallbackUrl, state, nonce, verifier))
    })

  /** Any failure the flow did not name is `sso_failed`, logged for the operator. */
  const orFailed = <E, R>(effect: Effect.Effect<string, E, R>) =>
    effect.pipe(Effect.catchCause((cause) => Effect.as(Effect.logWarning("sso step failed", { cause: String(cause) }), frontend({ error: "sso_failed" }))))

  const check = Effect.fn("Sso.check")(function* (email: string) {
    const row = yield* store.configsForDomain(domainOf(email))
    return row === undefined ? { sso_enabled: false, enforced: false, org_slug: null } : { sso_enabled: true, enforced: row.enforced, org_slug: row.slug }
  })

  const configureSaml = Effect.fn("Sso.configureSaml")(function* (principal: Principal, input: SamlInput, context: AuditContext) {
    yield* requireOwner(principal)
    const org = yield* orgOf(principal)
    yield* requirePlan(org)
    const metadata = yield* Effect.try({ try: () => readIdpMetadata(input.idp_metadata_xml), catch: (error) => ConfigInvalid.of((error as Error).message) }).pipe(
      Effect.catchTag("ConfigInvalid", refuse)
    )
    const domains = yield* domainsFor(org, input.domains)
    yield* ensureKeys(org)
    yield* store.setProtocol(
      org.org_uuid,
      { protocol: "saml", idp_entity_id: metadata.entityId, idp_sso_url: metadata.ssoUrl, idp_cert: JSON.stringify(metadata.certs), oidc_issuer_url: null, oidc_client_id: null, oidc_client_secret_sealed: null },
      domains
    )
    forget(org.org_uuid)
    yield* audit(principal, "sso.configured", { protocol: "saml", idp_entity_id: metadata.entityId, domains }, context)
    return view(yield* store.config(org.org_uuid), org)
  })

  const configureOidc = Effect.fn("Sso.configureOidc")(function* (principal: Principal, input: OidcInput, context: AuditContext) {
    yield* requireOwner(principal)
    const org = yield* orgOf(principal)
    yield* requirePlan(org)
    if (!/^https?:\/\//.test(input.issuer_url)) return yield* refuse(ConfigInvalid.of("issuer_url must be an http(s) URL"))
    // Discovery proves the issuer is reachable and names itself as configured.
    const configuration = yield* Effect.tryPromise({
      try: () => discover({ issuerUrl: input.issuer_url, clientId: input.client_id, clientSecret: input.client_secret }, reach),
      catch: (error) => ConfigInvalid.of(`issuer unreachable or invalid: ${(error as Error).message}`)
    }).pipe(Effect.catchTag("ConfigInvalid", refuse))
    if (!(yield* Effect.promise(() => credentialsAccepted(configuration, oidcCallbackUrl)))) {
      return yield* refuse(ConfigInvalid.of("the provider refused the client credentials"))
    }
    const domains = yield* domainsFor(org, input.domains)
    yield* ensureKeys(org)
    const issuer = configuration.serverMetadata().issuer
    yield* store.setProtocol(
      org.org_uuid,
      {
        protocol: "oidc",
        idp_entity_id: issuer,
        idp_sso_url: null,
        idp_cert: null,
        oidc_issuer_url: input.issuer_url,
        oidc_client_id: input.client_id,
        oidc_client_secret_sealed: envelope.seal(input.client_secret, secretAad(org.org_uuid))
      },
      domains
    )
    forget(org.org_uuid)
    yield* audit(principal, "sso.configured", { protocol: "oidc", issuer_url: input.issuer_url, domains }, context)
    return view(yield* store.config(org.org_uuid), org)
  })

  const enforce = Effect.fn("Sso.enforce")(function* (principal: Principal, enforcing: boolean, context: AuditContext) {
    yield* requireOwner(principal)
    const changed = yield* store.setEnforced(principal.orgUuid, enforcing)
    if (!changed) return yield* refuse(new NotConfigured({}))
    yield* audit(principal, enforcing ? "sso.enforced" : "sso.enforcement_disabled", {}, context)
    return { message: enforcing ? "SSO is now enforced: password login is refused for the organization's domains" : "SSO is no longer enforced" }
  })

  const show = Effect.fn("Sso.show")(function* (principal: Principal) {
    yield* requireOwner(principal)
    const org = yield* orgOf(principal)
    return view(yield* store.config(org.org_uuid), org)
  })

  const remove = Effect.fn("Sso.remove")(function* (principal: Principal, context: AuditContext) {
    yield* requireOwner(principal)
    yield* store.clear(principal.orgUuid)
    forget(principal.orgUuid)
    yield* audit(principal, "sso.removed", {}, context)
  })

  const metadata = Effect.fn("Sso.metadata")(function* (slug: string) {
    const org = yield* store.orgBySlug(slug)
    if (org === undefined) return yield* refuse(MetadataNotFound.of(slug))
    // Published before the IdP is configured: the IdP's administrator needs it to set us up.
    yield* ensureKeys(org)
    const row = yield* configOf(org)
    const saml = samlFor(spOf(org, row), { entityId: null, ssoUrl: acsUrl, certs: [] as Array<string> })
    return saml.generateServiceProviderMetadata(null, row.sp_cert)
  })

  const login = Effect.fn("Sso.login")(function* (slug: string, only?: "saml" | "oidc") {
    return yield* orFailed(
      Effect.gen(function* () {
        const found = yield* configuredOrg(slug, only)
        if (found.error !== undefined) return frontend({ error: found.error })
        if (found.row.protocol === "oidc") return yield* oidcStart(found.org, found.row)
        return yield* Effect.tryPromise(() => samlOf(found.org, found.row).getAuthorizeUrlAsync(slug, undefined, {}))
      })
    )
  })

  const acs = Effect.fn("Sso.acs")(function* (samlResponse: string, relayState: string | undefined) {
    return yield* orFailed(
      Effect.gen(function* () {
        const found = yield* configuredOrg(relayState ?? "", "saml")
        if (found.error !== undefined) return frontend({ error: "sso_failed" })
        const { org, row } = found
        const validated = yield* Effect.tryPromise(() => samlOf(org, row).validatePostResponseAsync({ SAMLResponse: samlResponse })).pipe(Effect.option)
        const profile = validated._tag === "Some" ? validated.value.profile : null
        const assertionXml = profile?.getAssertionXml?.()
        if (profile == null || assertionXml === undefined) return frontend({ error: "sso_validation_failed" })
        const facts = assertionFacts(assertionXml)
        // node-saml checks audience, signature and time; the bearer Recipient must be our ACS too.
        if (facts.id === "" || (facts.recipient !== null && facts.recipient !== acsUrl)) return frontend({ error: "sso_validation_failed" })
        const now = yield* Clock.currentTimeMillis
        const notOnOrAfter = facts.notOnOrAfter === null ? now + 10 * 60_000 : Date.parse(facts.notOnOrAfter)
        const keepUntil = new Date((Number.isNaN(notOnOrAfter) ? now : notOnOrAfter) + CLOCK_SKEW_MS).toISOString()
        const fresh = yield* store.spendAssertion(org.org_uuid, facts.id, keepUntil)
        if (!fresh) return frontend({ error: "sso_validation_failed" })
        const email = String(profile.email ?? profile.mail ?? profile.nameID ?? "")
        const name = typeof profile.displayName === "string" ? profile.displayName : null
        const userUuid = yield* userFor(org, row, email, name)
        if (userUuid === undefined) return frontend({ error: "sso_failed" })
        return yield* codeFor(org.org_uuid, userUuid, email, "saml")
      })
    )
  })

  const oidcCallback = Effect.fn("Sso.oidcCallback")(function* (query: OidcCallbackQuery) {
    return yield* orFailed(
      Effect.gen(function* () {
        if (query.state === undefined || query.code === undefined) return frontend({ error: "sso_failed" })
        const now = yield* Clock.currentTimeMillis
        const pending = yield* store.takeOidcLogin(digest("state", query.state))
        if (pending === undefined || new Date(pending.expires_at).getTime() < now) return frontend({ error: "sso_failed" })
        const org = yield* store.org(pending.org_uuid)
        const row = yield* store.config(pending.org_uuid)
        if (org === undefined || row?.protocol !== "oidc") return frontend({ error: "sso_failed" })
        const verifier = envelope.openText(pending.code_verifier_sealed, `sso_oidc_verifier:${digest("state", query.state)}`)
        const callback = new URL(oidcCallbackUrl)
        callback.searchParams.set("code", query.code)
        callback.searchParams.set("state", query.state)
        // RFC 9207: openid-client checks the issuer the provider named in its answer.
        if (query.iss !== undefined) callback.searchParams.set("iss", query.iss)
        const claims = yield* Effect.tryPromise(async () => redeem(await discovered(row, now), callback, { state: query.state!, nonce: pending.nonce, verifier }))
        if (claims.email_verified === false) return frontend({ error: "sso_failed" })
        const email = String(claims.email ?? "")
        const userUuid = yield* userFor(org, row, email, typeof claims.name === "string" ? claims.name : null)
        if (userUuid === undefined) return frontend({ error: "sso_failed" })
        return yield* codeFor(org.org_uuid, userUuid, email, "oidc")
      })
    )
  })

  const exchange = Effect.fn("Sso.exchange")(function* (code: string) {
    const spent = yield* store.spendCode(digest("code", code))
    const user = spent === undefined ? undefined : yield* store.activeUser(spent.user_uuid, spent.org_uuid)
    if (user === undefined) return yield* refuse(new ExchangeRefused({}))
    const token = yield* Effect.promise(() => issueJwt(secrets, { userUuid: user.user_uuid, orgUuid: user.org_uuid, role: user.role, email: user.email }))
    return { token, expires_in: JWT_LIFETIME_SECONDS, org_uuid: user.org_uuid, user_uuid: user.user_uuid }
  })

  const passwordLoginClosed = Effect.fn("Sso.passwordLoginClosed")(function* (orgUuid: string, email: string) {
    return yield* store.enforcedFor(orgUuid, email)
  })

  return Sso.of({ check, configureSaml, configureOidc, enforce, show, remove, metadata, login, acs, oidcCallback, exchange, passwordLoginClosed })
})

export interface SamlInput {
  readonly idp_metadata_xml: string
  readonly domains?: ReadonlyArray<string>
}

export interface OidcInput {
  readonly client_id: string
  readonly client_secret: string
  readonly issuer_url: string
  readonly domains?: ReadonlyArray<string>
}

export interface OidcCallbackQuery {
  readonly code?: string
  readonly state?: string
  readonly iss?: string
  readonly error?: string
}

export interface SsoService {
  readonly check: (email: string) => Effect.Effect<{ readonly sso_enabled: boolean; readonly enforced: boolean; readonly org_slug: string | null }>
  readonly configureSaml: (principal: Principal, input: SamlInput, context: AuditContext) => Effect.Effect<SsoConfiguration, SsoError>
  readonly configureOidc: (principal: Principal, input: OidcInput, context: AuditContext) => Effect.Effect<SsoConfiguration, SsoError>
  readonly enforce: (principal: Principal, enforce: boolean, context: AuditContext) => Effect.Effect<{ readonly message: string }, SsoError>
  readonly show: (principal: Principal) => Effect.Effect<SsoConfiguration, SsoError>
  readonly remove: (principal: Principal, context: AuditContext) => Effect.Effect<void, SsoError>
  /** The SP metadata XML of the organization with this slug. */
  readonly metadata: (slug: string) => Effect.Effect<string, SsoError>
  /** Where `GET /login/{slug}` sends the browser: the IdP, or the frontend with an error. */
  readonly login: (slug: string, only?: "saml" | "oidc") => Effect.Effect<string>
  readonly acs: (samlResponse: string, relayState: string | undefined) => Effect.Effect<string>
  readonly oidcCallback: (query: OidcCallbackQuery) => Effect.Effect<string>
  readonly exchange: (code: string) => Effect.Effect<{ readonly token: string; readonly expires_in: number; readonly org_uuid: string; readonly user_uuid: string }, SsoError>
  /** Password login is closed for users of an organization that enforces SSO for their domain. */
  readonly passwordLoginClosed: (orgUuid: string, email: string) => Effect.Effect<boolean>
}

export class Sso extends Context.Service<Sso, SsoService>()("gateway/Sso") {
  static readonly layer = Layer.effect(Sso)(makeSso)
}
