/**
 * OIDC single sign-on against oidc-provider (a certified OpenID Provider) run here on 127.0.0.1:
 * the full code flow with PKCE, the provider's login interaction driven by the test, the user
 * made a member on first sign-in, and a wrong state or nonce refused. The gateway reaches the
 * provider only through its outbound client (private address and http allowed for the test).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer({ DEPLOYMENT_MODE: "cloud", OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" })
const domain = `oidc-${process.pid}-${Date.now().toString(36)}.test`
const CLIENT_ID = "gateway"
const CLIENT_SECRET = "a client secret of some length"

/** The e-mail the next login interaction signs in as. */
let signInAs = `alice@${domain}`

interface Idp {
  readonly issuer: string
  readonly http: Server
}

const idp = useFixture<Idp>(
  async () => {
    const moduleName = "oidc-provider"
    const { default: Provider } = (await import(moduleName)) as { default: new (issuer: string, config: object) => any }
    const http = createServer()
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
    const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: [`${server.url}/api/v1/auth/sso/oidc/callback`],
          grant_types: ["authorization_code"],
          response_types: ["code"]
        }
      ],
      pkce: { required: () => true },
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
      cookies: { keys: ["test cookie key"] },
      findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub, email: sub, email_verified: true, name: "Alice" }) }),
      // Consent is granted up front, so the only interaction is the login.
      loadExistingGrant: async (ctx: any) => {
        const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId })
        grant.addOIDCScope("openid email profile")
        await grant.save()
        return grant
      }
    })
    const callback = provider.callback()
    http.on("request", async (req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.startsWith("/interaction/")) {
        await provider.interactionDetails(req, res)
        await provider.interactionFinished(req, res, { login: { accountId: signInAs } }, { mergeWithLastSubmission: false })
        return
      }
      callback(req, res)
    })
    return { issuer, http }
  },
  async ({ http }) => {
    http.closeAllConnections()
    await new Promise((resolve) => http.close(resolve))
  }
)

const org = useFixture<Org>(async () => {
  const owner = await registerOrg(server.url, "Acme OIDC")
  await call(server.url, "PUT", `/api/v1/admin/orgs/${owner.orgUuid}/plan`, { body: { plan: "business" }, headers: { "x-admin-key": "test-admin-key" } })
  return owner
})

/** Follows redirects by hand with a cookie jar, until one leaves the provider. */
const browse = async (start: string) => {
  const jar = new Map<string, string>()
  let url = new URL(start)
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: "manual", headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";")
      const at = pair!.indexOf("=")
      jar.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
    const location = response.headers.get("location")
    if (location === null) throw new Error(`no redirect from ${url}: ${response.status} ${await response.text()}`)
    url = new URL(location, url)
    if (url.origin !== idp.issuer) return url
  }
  throw new Error("too many redirects")
}

const step = async (url: URL | string) => {
  const response = await fetch(url, { redirect: "manual" })
  return new URL(response.headers.get("location") ?? "", server.url)
}

let slug = ""

describe("OIDC configuration", () => {
  it("refuses an unreachable issuer with 400 SSO_CONFIG_ERROR", async () => {
    const reply = await call(server.url, "POST", "/api/v1/sso/configure-oidc", {
      token: org.token,
      body: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, issuer_url: "http://127.0.0.1:9/nothing" }
    })
    expect(reply.status).toBe(400)
    expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
  })

  it("refuses client credentials the provider does not accept with 400 SSO_CONFIG_ERROR", async () => {
    const reply = await call(server.url, "POST", "/api/v1/sso/configure-oidc", {
      token: org.token,
      body: { client_id: CLIENT_ID, client_secret: "not the secret", issuer_url: idp.issuer }
    })
    expect(reply.status).toBe(400)
    expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
  })

  it("configures OIDC by discovery and never answers the secret", async () => {
    const reply = await call(server.url, "POST", "/api/v1/sso/configure-oidc", {
      token: org.token,
      body: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, issuer_url: idp.issuer, domains: [domain] }
    })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ enabled: true, protocol: "oidc", oidc_issuer_url: idp.issuer, oidc_client_id: CLIENT_ID, sp_acs_url: null })
    expect(reply.text).not.toContain(CLIENT_SECRET)
    slug = reply.body.sp_metadata_url.split("/").pop()
    const shown = await call(server.url, "GET", "/api/v1/sso", { token: org.token })
    expect(shown.text).not.toContain(CLIENT_SECRET)
    const stored = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM sso_configs WHERE org_uuid = ${org.orgUuid}`))
    expect(JSON.stringify(stored)).not.toContain(CLIENT_SECRET)
  })
})

describe("OIDC sign-in", () => {
  it("runs the code flow with PKCE, creates a member, and the code gives a JWT once", async () => {
    const redirect = await step(`${server.url}/api/v1/auth/sso/oidc/login/${slug}`)
    expect(redirect.origin).toBe(idp.issuer)
    expect(redirect.searchParams.get("code_challenge_method")).toBe("S256")
    expect(redirect.searchParams.get("code_challenge")).toBeTruthy()
    expect(redirect.searchParams.get("state")).toBeTruthy()
    expect(redirect.searchParams.get("nonce")).toBeTruthy()
    // The protocol is detected by the generic login route too.
    expect((await step(`${server.url}/api/v1/auth/sso/login/${slug}`)).origin).toBe(idp.issuer)

    const callback = await browse(redirect.href)
    expect(callback.pathname).toBe("/api/v1/auth/sso/oidc/callback")
    const landed = await step(callback)
    expect(landed.pathname).toBe("/dashboard/sso/callback")
    const code = landed.searchParams.get("code")!
    expect(code).toBeTruthy()
    const exchanged = await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code } })
    expect(exchanged.status).toBe(200)
    const whoami = await call(server.url, "GET", "/api/v1/auth/whoami", { token: exchanged.body.token })
    expect(whoami.body).toMatchObject({ email: `alice@${domain}`, role: "member", org_uuid: org.orgUuid })
    const again = await call(server.url, "POST", "/api/v1/auth/sso/exchange", { body: { code } })
    expect(again.status).toBe(400)
    expect(again.body.code).toBe("SSO_EXCHANGE_ERROR")
    const audit = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ event: string }>`SELECT event FROM audit_log WHERE org_uuid = ${org.orgUuid} AND event LIKE 'sso.%'`)
    )
    expect(audit.map((row) => row.event)).toEqual(expect.arrayContaining(["sso.configured", "sso.login"]))
    // The provider's answer is single use too.
    expect((await step(callback)).searchParams.get("error")).toBe("sso_failed")
  })

  it("refuses a wrong state", async () => {
    const redirect = await step(`${server.url}/api/v1/auth/sso/oidc/login/${slug}`)
    const callback = await browse(redirect.href)
    callback.searchParams.set("state", "forged-state")
    expect((await step(callback)).searchParams.get("error")).toBe("sso_failed")
    expect((await step(`${server.url}/api/v1/auth/sso/oidc/callback?code=x`)).searchParams.get("error")).toBe("sso_failed")
  })

  it("refuses an ID token whose nonce is not the login's", async () => {
    const redirect = await step(`${server.url}/api/v1/auth/sso/oidc/login/${slug}`)
    const callback = await browse(redirect.href)
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE sso_oidc_logins SET nonce = 'another-nonce' WHERE org_uuid = ${org.orgUuid}`))
    expect((await step(callback)).searchParams.get("error")).toBe("sso_failed")
  })

  it("refuses an e-mail outside the organization's domains", async () => {
    signInAs = "mallory@elsewhere.test"
    const callback = await browse((await step(`${server.url}/api/v1/auth/sso/oidc/login/${slug}`)).href)
    expect((await step(callback)).searchParams.get("error")).toBe("sso_failed")
    signInAs = `alice@${domain}`
  })

  it("answers error redirects for unknown and unconfigured organizations", async () => {
    expect((await step(`${server.url}/api/v1/auth/sso/oidc/login/no-such-org`)).searchParams.get("error")).toBe("org_not_found")
    const other = await registerOrg(server.url, "Other")
    const otherSlug = (await call(server.url, "GET", `/api/v1/auth/sso/check?email=${encodeURIComponent(`x@${domain}`)}`)).body.org_slug
    expect(otherSlug).toBe(slug)
    const bare = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ slug: string }>`SELECT slug FROM organizations WHERE org_uuid = ${other.orgUuid}`))
    expect((await step(`${server.url}/api/v1/auth/sso/oidc/login/${bare[0]!.slug}`)).searchParams.get("error")).toBe("sso_not_configured")
    // SP metadata is published before the IdP is configured (its administrator needs it first).
    expect((await call(server.url, "GET", `/api/v1/auth/sso/metadata/${bare[0]!.slug}`)).status).toBe(200)
  })
})
