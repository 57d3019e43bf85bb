/**
 * SAML single sign-on against a real identity provider run here: samlify acting as the IdP,
 * signing with its own key, its metadata given to /sso/configure. Sign-in creates a member and
 * ends in a one-time code exchanged for a JWT; unsigned, expired, wrong-audience and replayed
 * assertions are refused; enforcement closes password login; owner-only, plan rule, isolation.
 */
import { createRequire } from "node:module"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeSpKeyPair } from "../src/sso/saml.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

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

const server = useServer({ DEPLOYMENT_MODE: "cloud" })
const domain = `acme-${process.pid}-${Date.now().toString(36)}.test`
const IDP_ENTITY = "https://idp.example.test/metadata"
const IDP_SSO = "https://idp.example.test/sso"

interface Setup {
  readonly org: Org
  readonly other: Org
  readonly idp: ReturnType<typeof samlify.IdentityProvider>
  readonly idpKey: { certPem: string; keyPem: string }
}

const setup = useFixture<Setup>(async () => {
  const org = await registerOrg(server.url, "Acme SSO")
  const other = await registerOrg(server.url, "Other Co")
  const idpKey = await makeSpKeyPair("Test IdP", Date.now())
  const idp = samlify.IdentityProvider({
    entityID: IDP_ENTITY,
    privateKey: idpKey.keyPem,
    signingCert: idpKey.certPem,
    singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: IDP_SSO }],
    nameIDFormat: ["urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"]
  })
  return { org, other, idp, idpKey }
})

const setPlan = (org: Org, plan: string) =>
  call(server.url, "PUT", `/api/v1/admin/orgs/${org.orgUuid}/plan`, { body: { plan }, headers: { "x-admin-key": "test-admin-key" } })

/** One browser step: the redirect it answers, not followed. */
const step = async (method: string, path: string, form?: Record<string, string>) => {
  const response = await fetch(server.url + path, {
    method,
    redirect: "manual",
    ...(form ? { body: new URLSearchParams(form).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } } : {})
  })
  return { status: response.status, location: new URL(response.headers.get("location") ?? "", server.url) }
}

let slug = ""
let spMetadata = ""

const ourSp = () => samlify.ServiceProvider({ metadata: spMetadata })

/** A login response for `email`, from the IdP to `sp`, optionally with the template's tags changed. */
const loginResponse = async (email: string, sp = ourSp(), tags?: (values: Record<string, string>) => Record<string, string>) => {
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
  const created = await setup.idp.createLoginResponse(sp, {}, "post", { email }, replace ? { customTagReplacement: replace } : undefined)
  return created.context
}

const acs = (samlResponse: string, relayState = slug) => step("POST", "/api/v1/auth/sso/acs", { SAMLResponse: samlResponse, RelayState: relayState })

describe("SSO administration", () => {
  it("refuses configuration below the Business plan with 403 PLAN_REQUIRED", async () => {
    const reply = await call(server.url, "POST", "/api/v1/sso/configure", { token: setup.org.token, body: { idp_metadata_xml: setup.idp.getMetadata() } })
    expect(reply.status).toBe(403)
    expect(reply.body.code).toBe("PLAN_REQUIRED")
  })

  it("refuses enforcement while unconfigured with 400 SSO_ENFORCE_ERROR, and shows all null and false", async () => {
    const reply = await call(server.url, "POST", "/api/v1/sso/enforce", { token: setup.org.token, body: { enforce: true } })
    expect(reply.status).toBe(400)
    expect(reply.body.code).toBe("SSO_ENFORCE_ERROR")
    const shown = await call(server.url, "GET", "/api/v1/sso", { token: setup.org.token })
    expect(shown.status).toBe(200)
    expect(shown.body).toMatchObject({ enabled: false, enforced: false, protocol: null, idp_entity_id: null, sp_entity_id: null, oidc_client_id: null })
  })

  it("answers any metadata text that is not IdP metadata with 400 SSO_CONFIG_ERROR (property)", async () => {
    expect((await setPlan(setup.org, "business")).status).toBe(200)
    const xmlish = fc.oneof(
      fc.string({ minLength: 1 }),
      fc.string().map((inner) => `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${inner}</md:EntityDescriptor>`)
    )
    await fc.assert(
      fc.asyncProperty(xmlish, async (xml) => {
        const reply = await call(server.url, "POST", "/api/v1/sso/configure", { token: setup.org.token, body: { idp_metadata_xml: xml } })
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
      }),
      { numRuns: 25 }
    )
  })

  it("refuses bad metadata with 400 SSO_CONFIG_ERROR", async () => {
    expect((await setPlan(setup.org, "business")).status).toBe(200)
    for (const xml of ["not xml at all <", "<EntityDescriptor xmlns='urn:oasis:names:tc:SAML:2.0:metadata' entityID='x'/>"]) {
      const reply = await call(server.url, "POST", "/api/v1/sso/configure", { token: setup.org.token, body: { idp_metadata_xml: xml } })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
    }
  })

  it("configures SAML from the IdP metadata (owner, Business plan)", async () => {
    const reply = await call(server.url, "POST", "/api/v1/sso/configure", { token: setup.org.token, body: { idp_metadata_xml: setup.idp.getMetadata(), domains: [domain] } })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ enabled: true, enforced: false, protocol: "saml", idp_entity_id: IDP_ENTITY, sp_acs_url: `${server.url}/api/v1/auth/sso/acs` })
    expect(reply.body.domains).toContain(domain)
    expect(reply.body.domains).toContain("example.test")
    slug = reply.body.sp_metadata_url.split("/").pop()
    expect(reply.body.sp_entity_id).toBe(reply.body.sp_metadata_url)
  })

  it("is owner-only (members 403, API keys 401)", async () => {
    const invite = await call(server.url, "POST", "/api/v1/team/invites", { token: setup.org.token, body: { email: `admin@${domain}`, role: "admin" } })
    const admin = await call(server.url, "POST", "/api/v1/auth/register", { body: { email: `admin@${domain}`, password: "a long admin password", invite_code: invite.body.invite_code } })
    expect(admin.status).toBe(201)
    for (const [method, path, body] of [
      ["POST", "/api/v1/sso/configure", { idp_metadata_xml: setup.idp.getMetadata() }],
      ["POST", "/api/v1/sso/enforce", { enforce: true }],
      ["GET", "/api/v1/sso", undefined],
      ["DELETE", "/api/v1/sso", undefined]
    ] as const) {
      expect((await call(server.url, method, path, { token: admin.body.token, body })).status).toBe(403)
      expect((await call(server.url, method, path, { token: setup.org.key, body })).status).toBe(401)
    }
  })

  it("refuses a domain another organization already uses", async () => {
    expect((await setPlan(setup.other, "enterprise")).status).toBe(200)
    const reply = await call(server.url, "POST", "/api/v1/sso/configure", { token: setup.other.token, body: { idp_metadata_xml: setup.idp.getMetadata(), domains: [domain] } })
    expect(reply.status).toBe(400)
    expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
  })
})

describe("SAML sign-in", () => {
  it("publishes SP metadata with entity id, ACS address and our certificate", async () => {
    const reply = await call(server.url, "GET", `/api/v1/auth/sso/metadata/${slug}`)
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toContain("xml")
    spMetadata = reply.text
    expect(spMetadata).toContain(`entityID="${server.url}/api/v1/auth/sso/metadata/${slug}"`)
    expect(spMetadata).toContain(`Location="${server.url}/api/v1/auth/sso/acs"`)
    expect(spMetadata).toContain("X509Certificate")
    expect(spMetadata).toContain('WantAssertionsSigned="true"')
    expect((await call(server.url, "GET", "/api/v1/auth/sso/metadata/no-such-org")).status).toBe(404)
  })

  it("checks by e-mail domain", async () => {
    const known = await call(server.url, "GET", `/api/v1/auth/sso/check?email=${encodeURIComponent(`x@${domain}`)}`)
    expect(known.body).toMatchObject({ sso_enabled: true, enforced: false, org_slug: slug })
    const unknown = await call(server.url, "GET", `/api/v1/auth/sso/check?email=${encodeURIComponent("x@nowhere.test")}`)
    expect(unknown.body).toMatchObject({ sso_enabled: false, enforced: false, org_slug: null })
  })

  it("redirects the login to the IdP with a SAML request and the slug as RelayState", async () => {
    const reply = await step("GET", `/api/v1/auth/sso/login/${slug}`)
    expect(reply.status).toBe(302)
    expect(reply.location.origin + reply.location.pathname).toBe(IDP_SSO)
    expect(reply.location.searchParams.get("SAMLRequest")).toBeTruthy()
    expect(reply.location.searchParams.get("RelayState")).toBe(slug)
    expect((await step("GET", "/api/v1/auth/sso/login/no-such-org")).location.searchParams.get("error")).toBe("org_not_found")
    const otherSlug = (await call(server.url, "GET", `/api/v1/auth/sso/check?email=${encodeURIComponent(setup.other.email)}`)).body
    expect(otherSlug.org_slug).toBe(slug) // example.test was claimed by the first organization configured
  })

  let firstResponse = ""
  it("creates the user as a member on first sign-in; the code gives a JWT once", async () => {
    firstResponse = await loginResponse(`alice@${domain}`)
    const reply = await acs(firstResponse)
    expect(reply.status).toBe(302)
    expect(reply.location.pathname).toBe("/dashboard/sso/callback")
    const code = reply.location.searchParams.get("code")!
    expect(code).toBeTruthy()
    const exchanged = await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code } })
    expect(exchanged.status).toBe(200)
    expect(exchanged.body).toMatchObject({ expires_in: 86400, org_uuid: setup.org.orgUuid })
    const whoami = await call(server.url, "GET", "/api/v1/auth/whoami", { token: exchanged.body.token })
    expect(whoami.body).toMatchObject({ email: `alice@${domain}`, role: "member", org_uuid: setup.org.orgUuid, user_uuid: exchanged.body.user_uuid })
    const again = await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code } })
    expect(again.status).toBe(400)
    expect(again.body.code).toBe("SSO_EXCHANGE_ERROR")
    const unknown = await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code: "made-up" } })
    expect(unknown.body.code).toBe("SSO_EXCHANGE_ERROR")
  })

  it("refuses an expired exchange code with 400 SSO_EXCHANGE_ERROR", async () => {
    const reply = await acs(await loginResponse(`alice@${domain}`))
    const code = reply.location.searchParams.get("code")!
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE sso_exchange_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`))
    const late = await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code } })
    expect(late.status).toBe(400)
    expect(late.body.code).toBe("SSO_EXCHANGE_ERROR")
  })

  it("never stores an exchange code in the clear", async () => {
    const reply = await acs(await loginResponse(`alice@${domain}`))
    const code = reply.location.searchParams.get("code")!
    const rows = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM sso_exchange_codes`))
    expect(JSON.stringify(rows)).not.toContain(code)
    expect((await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code } })).status).toBe(200)
  })

  it("finds the same user on the next sign-in", async () => {
    const reply = await acs(await loginResponse(`alice@${domain}`))
    const exchanged = await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code: reply.location.searchParams.get("code") } })
    const members = await call(server.url, "GET", "/api/v1/team/members?per_page=100", { token: setup.org.token })
    expect(members.body.members.filter((m: { email: string }) => m.email === `alice@${domain}`)).toHaveLength(1)
    expect(exchanged.status).toBe(200)
  })

  it("refuses a replayed assertion", async () => {
    const reply = await acs(firstResponse)
    expect(reply.location.searchParams.get("error")).toBe("sso_validation_failed")
    expect(reply.location.searchParams.get("code")).toBeNull()
  })

  it("refuses an expired assertion", async () => {
    // The same hand-filled template with current times is accepted, so the refusal below is the time's.
    const current = await loginResponse(`dave@${domain}`, ourSp(), (values) => values)
    expect((await acs(current)).location.searchParams.get("code")).toBeTruthy()
    const past = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString()
    const response = await loginResponse(`bob@${domain}`, ourSp(), (values) => ({
      ...values,
      IssueInstant: past(30),
      ConditionsNotBefore: past(30),
      ConditionsNotOnOrAfter: past(20),
      SubjectConfirmationDataNotOnOrAfter: past(20)
    }))
    expect((await acs(response)).location.searchParams.get("error")).toBe("sso_validation_failed")
  })

  it("accepts an assertion that expired within the 2-minute clock skew, not one beyond it", async () => {
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString()
    const expiringAt = (seconds: number) => (values: Record<string, string>) => ({
      ...values,
      IssueInstant: at(-240),
      ConditionsNotBefore: at(-240),
      ConditionsNotOnOrAfter: at(seconds),
      SubjectConfirmationDataNotOnOrAfter: at(seconds)
    })
    expect((await acs(await loginResponse(`dave@${domain}`, ourSp(), expiringAt(-60)))).location.searchParams.get("code")).toBeTruthy()
    expect((await acs(await loginResponse(`dave@${domain}`, ourSp(), expiringAt(-180)))).location.searchParams.get("error")).toBe("sso_validation_failed")
  })

  it("refuses an assertion for another audience", async () => {
    const stranger = samlify.ServiceProvider({
      entityID: "https://elsewhere.example.test/sp",
      wantAssertionsSigned: true,
      assertionConsumerService: [{ Binding: samlify.Constants.namespace.binding.post, Location: `${server.url}/api/v1/auth/sso/acs` }]
    })
    expect((await acs(await loginResponse(`bob@${domain}`, stranger))).location.searchParams.get("error")).toBe("sso_validation_failed")
  })

  it("refuses an unsigned assertion, in a signed or an unsigned response", async () => {
    const messageOnly = samlify.ServiceProvider({
      metadata: spMetadata.replace('WantAssertionsSigned="true"', 'WantAssertionsSigned="false"')
    })
    expect((await acs(await loginResponse(`bob@${domain}`, messageOnly))).location.searchParams.get("error")).toBe("sso_validation_failed")
    const signed = Buffer.from(await loginResponse(`bob@${domain}`), "base64").toString()
    const stripped = signed.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, "")
    expect(stripped).not.toContain("Signature")
    expect((await acs(Buffer.from(stripped).toString("base64"))).location.searchParams.get("error")).toBe("sso_validation_failed")
  })

  it("answers any posted text with a redirect, never a server error (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }).map((text) => Buffer.from(text).toString("base64"))), async (text) => {
        const reply = await acs(text)
        expect(reply.status).toBe(302)
        expect(reply.location.searchParams.get("error")).toBe("sso_validation_failed")
      }),
      { numRuns: 25 }
    )
  })

  it("refuses a response posted for another organization, or with garbage", async () => {
    const otherSlug = await call(server.url, "GET", "/api/v1/sso", { token: setup.other.token })
    expect(otherSlug.body.enabled).toBe(false)
    expect((await acs(await loginResponse(`bob@${domain}`), "no-such-org")).location.searchParams.get("error")).toBe("sso_failed")
    expect((await acs(Buffer.from("<nope/>").toString("base64"))).location.searchParams.get("error")).toBe("sso_validation_failed")
    expect((await acs("%%%not base64")).location.searchParams.get("error")).toBe("sso_validation_failed")
  })

  it("refuses an e-mail outside the organization's domains", async () => {
    expect((await acs(await loginResponse("mallory@elsewhere.test"))).location.searchParams.get("error")).toBe("sso_failed")
  })
})

describe("SSO enforcement", () => {
  it("closes password login for the domains' users, not the owner's; delete reopens it", async () => {
    const invite = await call(server.url, "POST", "/api/v1/team/invites", { token: setup.org.token, body: { email: `carol@${domain}`, role: "member" } })
    const password = "carol's long password"
    expect((await call(server.url, "POST", "/api/v1/auth/register", { body: { email: `carol@${domain}`, password, invite_code: invite.body.invite_code } })).status).toBe(201)
    const enforced = await call(server.url, "POST", "/api/v1/sso/enforce", { token: setup.org.token, body: { enforce: true } })
    expect(enforced.status).toBe(200)
    expect(typeof enforced.body.message).toBe("string")
    const refused = await call(server.url, "POST", "/api/v1/auth/login", { body: { email: `carol@${domain}`, password } })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("SSO_REQUIRED")
    expect((await call(server.url, "POST", "/api/v1/auth/login", { body: { email: setup.org.email, password: setup.org.password } })).status).toBe(200)
    // Another organization's users are untouched.
    expect((await call(server.url, "POST", "/api/v1/auth/login", { body: { email: setup.other.email, password: setup.other.password } })).status).toBe(200)
    expect((await call(server.url, "GET", `/api/v1/auth/sso/check?email=${encodeURIComponent(`carol@${domain}`)}`)).body.enforced).toBe(true)

    const removed = await call(server.url, "DELETE", "/api/v1/sso", { token: setup.org.token })
    expect(removed.status).toBe(204)
    expect((await call(server.url, "GET", "/api/v1/sso", { token: setup.org.token })).body).toMatchObject({ enabled: false, enforced: false, protocol: null })
    expect((await call(server.url, "POST", "/api/v1/auth/login", { body: { email: `carol@${domain}`, password } })).status).toBe(200)
    expect((await step("GET", `/api/v1/auth/sso/login/${slug}`)).location.searchParams.get("error")).toBe("sso_not_configured")
  })
})
