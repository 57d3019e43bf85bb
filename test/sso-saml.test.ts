/**
 * SAML single sign-on against a real identity provider run here: samlify acting as the IdP,
 * signing with its own key, its metadata given to /sso/configure. Sign-in creates a member and
 * ends in a one-time code exchanged for a JWT; unsigned, expired, wrong-audience and replayed
 * assertions are refused; enforcement closes password login; owner-only, plan rule, isolation.
 * Gateway routes go through the typed client (HttpApiClient over GatewayApi); the browser's
 * redirects and form posts stay raw fetches.
 */
import { createRequire } from "node:module"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import type { Plans } from "../protocol/accounts.js"
import { makeSpKeyPair } from "../src/sso/saml.js"
import { adminClient, answer, client, type GatewayClient, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

/** samlify, typed by hand here: its own typings pull the browser DOM library into the whole build. */
interface SamlEntity {
  readonly entityMeta: { getEntityID(): string }
}
interface Samlify {
  setSchemaValidator(validator: { validate: (xml: string) => Promise<string> }): void
  IdentityProvider(settings: Record<string, unknown>): SamlEntity & {
    getMetadata(): string
    createLoginResponse(sp: SamlEntity, request: object, binding: string, user: { email: string }, options?: object): Promise<{ context: string }>
  }
  ServiceProvider(settings: Record<string, unknown>): SamlEntity
  Constants: { namespace: { binding: { redirect: string; post: string } } }
  SamlLib: { replaceTagsByValue(template: string, values: Record<string, string>): string }
}
const samlify = createRequire(import.meta.url)("samlify") as Samlify

samlify.setSchemaValidator({ validate: async () => "skipped" })

const domain = `acme-${process.pid}-${Date.now().toString(36)}.test`
const IDP_ENTITY = "https://idp.example.test/metadata"
const IDP_SSO = "https://idp.example.test/sso"

class Fixtures extends Context.Service<
  Fixtures,
  {
    readonly org: Org
    readonly other: Org
    readonly idp: ReturnType<typeof samlify.IdentityProvider>
    readonly idpKey: { certPem: string; keyPem: string }
  }
>()("test/sso-saml/Fixtures") {}

const Setup = Layer.effect(
  Fixtures,
  Effect.gen(function* () {
    const org = yield* register("Acme SSO")
    const other = yield* register("Other Co")
    const idpKey = yield* Effect.promise(() => makeSpKeyPair("Test IdP", Date.now()))
    const idp = samlify.IdentityProvider({
      entityID: IDP_ENTITY,
      privateKey: idpKey.keyPem,
      signingCert: idpKey.certPem,
      singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: IDP_SSO }],
      nameIDFormat: ["urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"]
    })
    return { org, other, idp, idpKey }
  })
).pipe(Layer.provideMerge(Gateway.layer({ DEPLOYMENT_MODE: "cloud" })))


const setPlan = (org: Org, plan: (typeof Plans)[number]) =>
  Effect.flatMap(adminClient(), (admin) => admin.admin.setPlan({ params: { org_uuid: org.orgUuid }, payload: { plan }, responseMode: "response-only" }))

const onServer = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(effect)))

/** One browser step: the redirect it answers, not followed (raw fetch: the typed client would follow it, and form posts are the browser's). */
const step = (method: string, path: string, form?: Record<string, string>) =>
  Effect.flatMap(Gateway, (server) =>
    Effect.promise(async () => {
      const response = await fetch(server.url + path, {
        method,
        redirect: "manual",
        ...(form ? { body: new URLSearchParams(form).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } } : {})
      })
      return { status: response.status, location: new URL(response.headers.get("location") ?? "", server.url) }
    })
  )

let slug = ""
let spMetadata = ""

const ourSp = () => samlify.ServiceProvider({ metadata: spMetadata })

/** A login response for `email`, from the IdP to `sp`, optionally with the template's tags changed. */
const loginResponse = (email: string, sp = ourSp(), tags?: (values: Record<string, string>) => Record<string, string>) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const { idp } = yield* Fixtures
    const acs = `${server.url}/api/v1/auth/sso/acs`
    const replace = tags
      ? (template: string) => {
          const now = new Date()
          const later = new Date(now.getTime() + 5 * 60_000)
          const values = tags({
            ID: `_${crypto.randomUUID()}`,
            AssertionID: `_${crypto.randomUUID()}`,
            Destination: acs,
            Audience: sp.entityMeta.getEntityID(),
            EntityID: sp.entityMeta.getEntityID(),
            SubjectRecipient: acs,
            Issuer: IDP_ENTITY,
            IssueInstant: now.toISOString(),
            AssertionConsumerServiceURL: acs,
            StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
            ConditionsNotBefore: now.toISOString(),
            ConditionsNotOnOrAfter: later.toISOString(),
            SubjectConfirmationDataNotOnOrAfter: later.toISOString(),
            NameIDFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
            NameID: email,
            InResponseTo: "",
            AuthnStatement: "",
            AttributeStatement: ""
          })
          return { id: values.ID!, context: samlify.SamlLib.replaceTagsByValue(template, values) }
        }
      : undefined
    const created = yield* Effect.promise(() => idp.createLoginResponse(sp, {}, "post", { email }, replace ? { customTagReplacement: replace } : undefined))
    return created.context
  })

/** The browser's form post of a SAML response to the ACS (raw, see `step`). */
const acs = (samlResponse: string, relayState = slug) => step("POST", "/api/v1/auth/sso/acs", { SAMLResponse: samlResponse, RelayState: relayState })

liveLayer(Setup)((it) => {
  it.describe("SSO administration", () => {
    it.effect("refuses configuration below the Business plan with 403 PLAN_REQUIRED", () =>
      Effect.gen(function* () {
        const { org, idp } = yield* Fixtures
        const reply = yield* answer(
          (yield* client(org.token)).sso.configure({ payload: { idp_metadata_xml: idp.getMetadata() }, responseMode: "response-only" })
        )
        expect(reply.status).toBe(403)
        expect(reply.body.code).toBe("PLAN_REQUIRED")
      })
    )

    it.effect("refuses enforcement while unconfigured with 400 SSO_ENFORCE_ERROR, and shows all null and false", () =>
      Effect.gen(function* () {
        const { org } = yield* Fixtures
        const api = yield* client(org.token)
        const reply = yield* answer(api.sso.enforce({ payload: { enforce: true }, responseMode: "response-only" }))
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("SSO_ENFORCE_ERROR")
        const [shown, shownReply] = yield* api.sso.show({ responseMode: "decoded-and-response" })
        expect(shownReply.status).toBe(200)
        expect(shown).toMatchObject({ enabled: false, enforced: false, protocol: null, idp_entity_id: null, sp_entity_id: null, oidc_client_id: null })
      })
    )

    it.effect("answers any metadata text that is not IdP metadata with 400 SSO_CONFIG_ERROR (property)", () =>
      Effect.gen(function* () {
        const { org } = yield* Fixtures
        expect((yield* setPlan(org, "business")).status).toBe(200)
        const api = yield* client(org.token)
        const xmlish = fc.oneof(
          fc.string({ minLength: 1 }),
          fc.string().map((inner) => `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${inner}</md:EntityDescriptor>`)
        )
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(xmlish, async (xml) => {
              const reply = await Effect.runPromise(answer(api.sso.configure({ payload: { idp_metadata_xml: xml }, responseMode: "response-only" })))
              expect(reply.status).toBe(400)
              expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
            }),
            { numRuns: 25 }
          )
        )
      })
    )

    it.effect("refuses bad metadata with 400 SSO_CONFIG_ERROR", () =>
      Effect.gen(function* () {
        const { org } = yield* Fixtures
        expect((yield* setPlan(org, "business")).status).toBe(200)
        const api = yield* client(org.token)
        for (const xml of ["not xml at all <", "<EntityDescriptor xmlns='urn:oasis:names:tc:SAML:2.0:metadata' entityID='x'/>"]) {
          const reply = yield* answer(api.sso.configure({ payload: { idp_metadata_xml: xml }, responseMode: "response-only" }))
          expect(reply.status).toBe(400)
          expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
        }
      })
    )

    it.effect("configures SAML from the IdP metadata (owner, Business plan)", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org, idp } = yield* Fixtures
        const [configured, reply] = yield* (yield* client(org.token)).sso.configure({
          payload: { idp_metadata_xml: idp.getMetadata(), domains: [domain] },
          responseMode: "decoded-and-response"
        })
        expect(reply.status).toBe(200)
        expect(configured).toMatchObject({ enabled: true, enforced: false, protocol: "saml", idp_entity_id: IDP_ENTITY, sp_acs_url: `${server.url}/api/v1/auth/sso/acs` })
        expect(configured.domains).toContain(domain)
        expect(configured.domains).toContain("example.test")
        slug = configured.sp_metadata_url!.split("/").pop()!
        expect(configured.sp_entity_id).toBe(configured.sp_metadata_url)
      })
    )

    it.effect("is owner-only (members 403, API keys 401)", () =>
      Effect.gen(function* () {
        const { org, idp } = yield* Fixtures
        const invite = yield* (yield* client(org.token)).team.invite({ payload: { email: `admin@${domain}`, role: "admin" } })
        const [admin, adminReply] = yield* (yield* client()).auth.register({
          payload: { email: `admin@${domain}`, password: "a long admin password", invite_code: invite.invite_code },
          responseMode: "decoded-and-response"
        })
        expect(adminReply.status).toBe(201)
        const routes = [
          (api: GatewayClient) => api.sso.configure({ payload: { idp_metadata_xml: idp.getMetadata() }, responseMode: "response-only" }),
          (api: GatewayClient) => api.sso.enforce({ payload: { enforce: true }, responseMode: "response-only" }),
          (api: GatewayClient) => api.sso.show({ responseMode: "response-only" }),
          (api: GatewayClient) => api.sso.remove({ responseMode: "response-only" })
        ]
        const asAdmin = yield* client(admin.token)
        const asKey = yield* client(org.key)
        for (const route of routes) {
          expect((yield* route(asAdmin)).status).toBe(403)
          expect((yield* route(asKey)).status).toBe(401)
        }
      })
    )

    it.effect("refuses a domain another organization already uses", () =>
      Effect.gen(function* () {
        const { other, idp } = yield* Fixtures
        expect((yield* setPlan(other, "enterprise")).status).toBe(200)
        const reply = yield* answer(
          (yield* client(other.token)).sso.configure({ payload: { idp_metadata_xml: idp.getMetadata(), domains: [domain] }, responseMode: "response-only" })
        )
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
      })
    )
  })

  it.describe("SAML sign-in", () => {
    it.effect("publishes SP metadata with entity id, ACS address and our certificate", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const anonymous = yield* client()
        const [metadata, reply] = yield* anonymous.ssoPublic.metadata({ params: { org_slug: slug }, responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(reply.headers["content-type"]).toContain("xml")
        spMetadata = metadata
        expect(spMetadata).toContain(`entityID="${server.url}/api/v1/auth/sso/metadata/${slug}"`)
        expect(spMetadata).toContain(`Location="${server.url}/api/v1/auth/sso/acs"`)
        expect(spMetadata).toContain("X509Certificate")
        expect(spMetadata).toContain('WantAssertionsSigned="true"')
        expect((yield* anonymous.ssoPublic.metadata({ params: { org_slug: "no-such-org" }, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("checks by e-mail domain", () =>
      Effect.gen(function* () {
        const anonymous = yield* client()
        const known = yield* anonymous.ssoPublic.check({ query: { email: `x@${domain}` } })
        expect(known).toMatchObject({ sso_enabled: true, enforced: false, org_slug: slug })
        const unknown = yield* anonymous.ssoPublic.check({ query: { email: "x@nowhere.test" } })
        expect(unknown).toMatchObject({ sso_enabled: false, enforced: false, org_slug: null })
      })
    )

    it.effect("redirects the login to the IdP with a SAML request and the slug as RelayState", () =>
      Effect.gen(function* () {
        const { other } = yield* Fixtures
        const reply = yield* step("GET", `/api/v1/auth/sso/login/${slug}`)
        expect(reply.status).toBe(302)
        expect(reply.location.origin + reply.location.pathname).toBe(IDP_SSO)
        expect(reply.location.searchParams.get("SAMLRequest")).toBeTruthy()
        expect(reply.location.searchParams.get("RelayState")).toBe(slug)
        expect((yield* step("GET", "/api/v1/auth/sso/login/no-such-org")).location.searchParams.get("error")).toBe("org_not_found")
        const otherSlug = yield* (yield* client()).ssoPublic.check({ query: { email: other.email } })
        expect(otherSlug.org_slug).toBe(slug) // example.test was claimed by the first organization configured
      })
    )

    let firstResponse = ""
    it.effect("creates the user as a member on first sign-in; the code gives a JWT once", () =>
      Effect.gen(function* () {
        const { org } = yield* Fixtures
        firstResponse = yield* loginResponse(`alice@${domain}`)
        const reply = yield* acs(firstResponse)
        expect(reply.status).toBe(302)
        expect(reply.location.pathname).toBe("/dashboard/sso/callback")
        const code = reply.location.searchParams.get("code")!
        expect(code).toBeTruthy()
        const anonymous = yield* client()
        const [exchanged, exchangedReply] = yield* anonymous.ssoPublic.exchange({ payload: { code }, responseMode: "decoded-and-response" })
        expect(exchangedReply.status).toBe(200)
        expect(exchanged).toMatchObject({ expires_in: 86400, org_uuid: org.orgUuid })
        const whoami = yield* (yield* client(exchanged.token)).auth.whoami({})
        expect(whoami).toMatchObject({ email: `alice@${domain}`, role: "member", org_uuid: org.orgUuid, user_uuid: exchanged.user_uuid })
        const again = yield* answer(anonymous.ssoPublic.exchange({ payload: { code }, responseMode: "response-only" }))
        expect(again.status).toBe(400)
        expect(again.body.code).toBe("SSO_EXCHANGE_ERROR")
        const unknown = yield* answer(anonymous.ssoPublic.exchange({ payload: { code: "made-up" }, responseMode: "response-only" }))
        expect(unknown.body.code).toBe("SSO_EXCHANGE_ERROR")
      })
    )

    it.effect("refuses an expired exchange code with 400 SSO_EXCHANGE_ERROR", () =>
      Effect.gen(function* () {
        const reply = yield* acs(yield* loginResponse(`alice@${domain}`))
        const code = reply.location.searchParams.get("code")!
        yield* onServer(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE sso_exchange_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`))
        const late = yield* answer((yield* client()).ssoPublic.exchange({ payload: { code }, responseMode: "response-only" }))
        expect(late.status).toBe(400)
        expect(late.body.code).toBe("SSO_EXCHANGE_ERROR")
      })
    )

    it.effect("never stores an exchange code in the clear", () =>
      Effect.gen(function* () {
        const reply = yield* acs(yield* loginResponse(`alice@${domain}`))
        const code = reply.location.searchParams.get("code")!
        const rows = yield* onServer(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM sso_exchange_codes`))
        expect(JSON.stringify(rows)).not.toContain(code)
        expect((yield* (yield* client()).ssoPublic.exchange({ payload: { code }, responseMode: "response-only" })).status).toBe(200)
      })
    )

    it.effect("finds the same user on the next sign-in", () =>
      Effect.gen(function* () {
        const { org } = yield* Fixtures
        const reply = yield* acs(yield* loginResponse(`alice@${domain}`))
        const exchanged = yield* (yield* client()).ssoPublic.exchange({ payload: { code: reply.location.searchParams.get("code")! }, responseMode: "response-only" })
        const members = yield* (yield* client(org.token)).team.members({ query: { per_page: 100 } })
        expect(members.members.filter((m) => m.email === `alice@${domain}`)).toHaveLength(1)
        expect(exchanged.status).toBe(200)
      })
    )

    it.effect("refuses a replayed assertion", () =>
      Effect.gen(function* () {
        const reply = yield* acs(firstResponse)
        expect(reply.location.searchParams.get("error")).toBe("sso_validation_failed")
        expect(reply.location.searchParams.get("code")).toBeNull()
      })
    )

    it.effect("refuses an expired assertion", () =>
      Effect.gen(function* () {
        // The same hand-filled template with current times is accepted, so the refusal below is the time's.
        const current = yield* loginResponse(`dave@${domain}`, ourSp(), (values) => values)
        expect((yield* acs(current)).location.searchParams.get("code")).toBeTruthy()
        const past = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString()
        const response = yield* loginResponse(`bob@${domain}`, ourSp(), (values) => ({
          ...values,
          IssueInstant: past(30),
          ConditionsNotBefore: past(30),
          ConditionsNotOnOrAfter: past(20),
          SubjectConfirmationDataNotOnOrAfter: past(20)
        }))
        expect((yield* acs(response)).location.searchParams.get("error")).toBe("sso_validation_failed")
      })
    )

    it.effect("accepts an assertion that expired within the 2-minute clock skew, not one beyond it", () =>
      Effect.gen(function* () {
        const at = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString()
        const expiringAt = (seconds: number) => (values: Record<string, string>) => ({
          ...values,
          IssueInstant: at(-240),
          ConditionsNotBefore: at(-240),
          ConditionsNotOnOrAfter: at(seconds),
          SubjectConfirmationDataNotOnOrAfter: at(seconds)
        })
        expect((yield* acs(yield* loginResponse(`dave@${domain}`, ourSp(), expiringAt(-60)))).location.searchParams.get("code")).toBeTruthy()
        expect((yield* acs(yield* loginResponse(`dave@${domain}`, ourSp(), expiringAt(-180)))).location.searchParams.get("error")).toBe("sso_validation_failed")
      })
    )

    it.effect("refuses an assertion for another audience", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const stranger = samlify.ServiceProvider({
          entityID: "https://elsewhere.example.test/sp",
          wantAssertionsSigned: true,
          assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: `${server.url}/api/v1/auth/sso/acs` }]
        })
        expect((yield* acs(yield* loginResponse(`bob@${domain}`, stranger))).location.searchParams.get("error")).toBe("sso_validation_failed")
      })
    )

    it.effect("refuses an unsigned assertion, in a signed or an unsigned response", () =>
      Effect.gen(function* () {
        const messageOnly = samlify.ServiceProvider({
          metadata: spMetadata.replace('WantAssertionsSigned="true"', 'WantAssertionsSigned="false"')
        })
        expect((yield* acs(yield* loginResponse(`bob@${domain}`, messageOnly))).location.searchParams.get("error")).toBe("sso_validation_failed")
        const signed = Buffer.from(yield* loginResponse(`bob@${domain}`), "base64").toString()
        const stripped = signed.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, "")
        expect(stripped).not.toContain("Signature")
        expect((yield* acs(Buffer.from(stripped).toString("base64"))).location.searchParams.get("error")).toBe("sso_validation_failed")
      })
    )

    it.effect("answers any posted text with a redirect, never a server error (property)", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.oneof(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }).map((text) => Buffer.from(text).toString("base64"))), async (text) => {
              const reply = await Effect.runPromise(acs(text).pipe(Effect.provideService(Gateway, server)))
              expect(reply.status).toBe(302)
              expect(reply.location.searchParams.get("error")).toBe("sso_validation_failed")
            }),
            { numRuns: 25 }
          )
        )
      })
    )

    it.effect("refuses a response posted for another organization, or with garbage", () =>
      Effect.gen(function* () {
        const { other } = yield* Fixtures
        const otherSlug = yield* (yield* client(other.token)).sso.show({})
        expect(otherSlug.enabled).toBe(false)
        expect((yield* acs(yield* loginResponse(`bob@${domain}`), "no-such-org")).location.searchParams.get("error")).toBe("sso_failed")
        expect((yield* acs(Buffer.from("<nope/>").toString("base64"))).location.searchParams.get("error")).toBe("sso_validation_failed")
        expect((yield* acs("%%%not base64")).location.searchParams.get("error")).toBe("sso_validation_failed")
      })
    )

    it.effect("refuses an e-mail outside the organization's domains", () =>
      Effect.gen(function* () {
        expect((yield* acs(yield* loginResponse("mallory@elsewhere.test"))).location.searchParams.get("error")).toBe("sso_failed")
      })
    )
  })

  it.describe("SSO enforcement", () => {
    it.effect("closes password login for the domains' users, not the owner's; delete reopens it", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Fixtures
        const owner = yield* client(org.token)
        const anonymous = yield* client()
        const invite = yield* owner.team.invite({ payload: { email: `carol@${domain}`, role: "member" } })
        const password = "carol's long password"
        const joined = yield* anonymous.auth.register({ payload: { email: `carol@${domain}`, password, invite_code: invite.invite_code }, responseMode: "response-only" })
        expect(joined.status).toBe(201)
        const [enforced, enforcedReply] = yield* owner.sso.enforce({ payload: { enforce: true }, responseMode: "decoded-and-response" })
        expect(enforcedReply.status).toBe(200)
        expect(typeof enforced.message).toBe("string")
        const refused = yield* answer(anonymous.auth.login({ payload: { email: `carol@${domain}`, password }, responseMode: "response-only" }))
        expect(refused.status).toBe(403)
        expect(refused.body.code).toBe("SSO_REQUIRED")
        expect((yield* anonymous.auth.login({ payload: { email: org.email, password: org.password }, responseMode: "response-only" })).status).toBe(200)
        // Another organization's users are untouched.
        expect((yield* anonymous.auth.login({ payload: { email: other.email, password: other.password }, responseMode: "response-only" })).status).toBe(200)
        expect((yield* anonymous.ssoPublic.check({ query: { email: `carol@${domain}` } })).enforced).toBe(true)

        const removed = yield* owner.sso.remove({ responseMode: "response-only" })
        expect(removed.status).toBe(204)
        expect(yield* owner.sso.show({})).toMatchObject({ enabled: false, enforced: false, protocol: null })
        expect((yield* anonymous.auth.login({ payload: { email: `carol@${domain}`, password }, responseMode: "response-only" })).status).toBe(200)
        expect((yield* step("GET", `/api/v1/auth/sso/login/${slug}`)).location.searchParams.get("error")).toBe("sso_not_configured")
      })
    )
  })
})
