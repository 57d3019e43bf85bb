/**
 * OIDC single sign-on against oidc-provider (a certified OpenID Provider) run here on 127.0.0.1:
 * the full code flow with PKCE, the provider's login interaction driven by the test, the user
 * made a member on first sign-in, and a wrong state or nonce refused. The gateway reaches the
 * provider only through its outbound client (private address and http allowed for the test).
 * Gateway routes go through the typed client (HttpApiClient over GatewayApi); the browser's
 * redirects stay raw fetches.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { adminClient, answer, client, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

const domain = `oidc-${process.pid}-${Date.now().toString(36)}.test`
const CLIENT_ID = "gateway"
const CLIENT_SECRET = "a client secret of some length"

/** The e-mail the next login interaction signs in as. */
let signInAs = `alice@${domain}`

class Idp extends Context.Service<Idp, { readonly issuer: string; readonly http: Server }>()("test/sso-oidc/Idp") {}

/** The OpenID Provider, which redirects back to the test server's callback. */
const IdpLayer = Layer.effect(
  Idp,
  Effect.acquireRelease(
    Effect.flatMap(Gateway, (server) =>
      Effect.promise(async () => {
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
      })
    ),
    ({ http }) =>
      Effect.promise(async () => {
        http.closeAllConnections()
        await new Promise((resolve) => http.close(resolve))
      })
  )
)

class Owner extends Context.Service<Owner, Org>()("test/sso-oidc/Owner") {}


/** An owner on the Business plan, which single sign-on needs. */
const OwnerLayer = Layer.effect(
  Owner,
  Effect.gen(function* () {
    const owner = yield* register("Acme OIDC")
    yield* (yield* adminClient()).admin.setPlan({ params: { org_uuid: owner.orgUuid }, payload: { plan: "business" } })
    return owner
  })
)

const Setup = Layer.mergeAll(IdpLayer, OwnerLayer).pipe(
  Layer.provideMerge(Gateway.layer({ DEPLOYMENT_MODE: "cloud", OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" }))
)

const onServer = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(effect)))

/** Follows redirects by hand with a cookie jar, until one leaves the provider (raw fetches: a browser's redirects). */
const browse = (start: string) =>
  Effect.flatMap(Idp, (idp) =>
    Effect.promise(async () => {
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
    })
  )

/** One browser step: where the gateway's redirect points (raw fetch: the typed client would follow it). */
const step = (target: URL | string) =>
  Effect.flatMap(Gateway, (server) =>
    Effect.promise(async () => {
      const url = typeof target === "string" && target.startsWith("/") ? `${server.url}${target}` : target
      const response = await fetch(url, { redirect: "manual" })
      return new URL(response.headers.get("location") ?? "", server.url)
    })
  )

let slug = ""

liveLayer(Setup)((it) => {
  it.describe("OIDC configuration", () => {
    it.effect("refuses an unreachable issuer with 400 SSO_CONFIG_ERROR", () =>
      Effect.gen(function* () {
        const org = yield* Owner
        const reply = yield* answer(
          (yield* client(org.token)).sso.configureOidc({
            payload: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, issuer_url: "http://127.0.0.1:9/nothing" },
            responseMode: "response-only"
          })
        )
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
      })
    )

    it.effect("refuses client credentials the provider does not accept with 400 SSO_CONFIG_ERROR", () =>
      Effect.gen(function* () {
        const org = yield* Owner
        const idp = yield* Idp
        const reply = yield* answer(
          (yield* client(org.token)).sso.configureOidc({
            payload: { client_id: CLIENT_ID, client_secret: "not the secret", issuer_url: idp.issuer },
            responseMode: "response-only"
          })
        )
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("SSO_CONFIG_ERROR")
      })
    )

    it.effect("configures OIDC by discovery and never answers the secret", () =>
      Effect.gen(function* () {
        const org = yield* Owner
        const idp = yield* Idp
        const api = yield* client(org.token)
        const [configured, reply] = yield* api.sso.configureOidc({
          payload: { client_id: CLIENT_ID, client_secret: CLIENT_SECRET, issuer_url: idp.issuer, domains: [domain] },
          responseMode: "decoded-and-response"
        })
        expect(reply.status).toBe(200)
        expect(configured).toMatchObject({ enabled: true, protocol: "oidc", oidc_issuer_url: idp.issuer, oidc_client_id: CLIENT_ID, sp_acs_url: null })
        // The whole body as sent, not only the fields the contract keeps.
        expect(yield* reply.text).not.toContain(CLIENT_SECRET)
        slug = configured.sp_metadata_url!.split("/").pop()!
        const [, shown] = yield* api.sso.show({ responseMode: "decoded-and-response" })
        expect(yield* shown.text).not.toContain(CLIENT_SECRET)
        const stored = yield* onServer(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT * FROM sso_configs WHERE org_uuid = ${org.orgUuid}`))
        expect(JSON.stringify(stored)).not.toContain(CLIENT_SECRET)
      })
    )
  })

  it.describe("OIDC sign-in", () => {
    it.effect("runs the code flow with PKCE, creates a member, and the code gives a JWT once", () =>
      Effect.gen(function* () {
        const org = yield* Owner
        const idp = yield* Idp
        const redirect = yield* step(`/api/v1/auth/sso/oidc/login/${slug}`)
        expect(redirect.origin).toBe(idp.issuer)
        expect(redirect.searchParams.get("code_challenge_method")).toBe("S256")
        expect(redirect.searchParams.get("code_challenge")).toBeTruthy()
        expect(redirect.searchParams.get("state")).toBeTruthy()
        expect(redirect.searchParams.get("nonce")).toBeTruthy()
        // The protocol is detected by the generic login route too.
        expect((yield* step(`/api/v1/auth/sso/login/${slug}`)).origin).toBe(idp.issuer)

        const callback = yield* browse(redirect.href)
        expect(callback.pathname).toBe("/api/v1/auth/sso/oidc/callback")
        const landed = yield* step(callback)
        expect(landed.pathname).toBe("/dashboard/sso/callback")
        const code = landed.searchParams.get("code")!
        expect(code).toBeTruthy()
        const anonymous = yield* client()
        const [exchanged, exchangedReply] = yield* anonymous.ssoPublic.exchange({ payload: { code }, responseMode: "decoded-and-response" })
        expect(exchangedReply.status).toBe(200)
        const whoami = yield* (yield* client(exchanged.token)).auth.whoami({})
        expect(whoami).toMatchObject({ email: `alice@${domain}`, role: "member", org_uuid: org.orgUuid })
        const again = yield* answer(anonymous.ssoPublic.exchange({ payload: { code }, responseMode: "response-only" }))
        expect(again.status).toBe(400)
        expect(again.body.code).toBe("SSO_EXCHANGE_ERROR")
        const audit = yield* onServer(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ event: string }>`SELECT event FROM audit_log WHERE org_uuid = ${org.orgUuid} AND event LIKE 'sso.%'`)
        )
        expect(audit.map((row) => row.event)).toEqual(expect.arrayContaining(["sso.configured", "sso.login"]))
        // The provider's answer is single use too.
        expect((yield* step(callback)).searchParams.get("error")).toBe("sso_failed")
      })
    )

    it.effect("refuses a wrong state", () =>
      Effect.gen(function* () {
        const redirect = yield* step(`/api/v1/auth/sso/oidc/login/${slug}`)
        const callback = yield* browse(redirect.href)
        callback.searchParams.set("state", "forged-state")
        expect((yield* step(callback)).searchParams.get("error")).toBe("sso_failed")
        expect((yield* step("/api/v1/auth/sso/oidc/callback?code=x")).searchParams.get("error")).toBe("sso_failed")
      })
    )

    it.effect("refuses an ID token whose nonce is not the login's", () =>
      Effect.gen(function* () {
        const org = yield* Owner
        const redirect = yield* step(`/api/v1/auth/sso/oidc/login/${slug}`)
        const callback = yield* browse(redirect.href)
        yield* onServer(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE sso_oidc_logins SET nonce = 'another-nonce' WHERE org_uuid = ${org.orgUuid}`))
        expect((yield* step(callback)).searchParams.get("error")).toBe("sso_failed")
      })
    )

    it.effect("refuses an e-mail outside the organization's domains", () =>
      Effect.gen(function* () {
        signInAs = "mallory@elsewhere.test"
        const callback = yield* browse((yield* step(`/api/v1/auth/sso/oidc/login/${slug}`)).href)
        expect((yield* step(callback)).searchParams.get("error")).toBe("sso_failed")
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            signInAs = `alice@${domain}`
          })
        )
      )
    )

    it.effect("answers error redirects for unknown and unconfigured organizations", () =>
      Effect.gen(function* () {
        expect((yield* step("/api/v1/auth/sso/oidc/login/no-such-org")).searchParams.get("error")).toBe("org_not_found")
        const other = yield* register("Other")
        const anonymous = yield* client()
        const checked = yield* anonymous.ssoPublic.check({ query: { email: `x@${domain}` } })
        expect(checked.org_slug).toBe(slug)
        const bare = yield* onServer(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ slug: string }>`SELECT slug FROM organizations WHERE org_uuid = ${other.orgUuid}`)
        )
        expect((yield* step(`/api/v1/auth/sso/oidc/login/${bare[0]!.slug}`)).searchParams.get("error")).toBe("sso_not_configured")
        // SP metadata is published before the IdP is configured (its administrator needs it first).
        expect((yield* anonymous.ssoPublic.metadata({ params: { org_slug: bare[0]!.slug }, responseMode: "response-only" })).status).toBe(200)
      })
    )
  })
})
