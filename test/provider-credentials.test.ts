/**
 * Provider credentials (spec 002): merge per provider, never removing others; secrets sealed at
 * rest and never answered; validation per type; delete; owner/admin only; one organization's
 * credentials invisible to another. Over the typed client (HttpApiClient over GatewayApi).
 */
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { ModelCalls } from "../src/models/calls.js"
import { Secrets } from "../src/platform/secrets.js"
import { ProviderCredentials } from "../src/provider-credentials/service.js"
import { answer, client, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

interface TrapState {
  readonly state: { connections: number }
  readonly file: string
  readonly port: number
}

/** A loopback listener that counts every connection, and a file holding a canary secret: the targets of the attacks below. */
class Trap extends Context.Service<Trap, TrapState>()("test/provider-credentials/Trap") {}

const TrapLayer = Layer.effect(
  Trap,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const state = { connections: 0 }
      const listener = createServer((socket) => {
        state.connections++
        socket.destroy()
      })
      await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
      const directory = mkdtempSync(join(tmpdir(), "provider-trap-"))
      const file = join(directory, "secret.txt")
      writeFileSync(file, "CANARY-SECRET-FROM-A-LOCAL-FILE")
      return { state, listener, directory, file, port: (listener.address() as { port: number }).port }
    }),
    ({ listener, directory }) =>
      Effect.promise(async () => {
        rmSync(directory, { recursive: true, force: true })
        await new Promise<void>((resolve) => listener.close(() => resolve()))
      })
  )
)

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/provider-credentials/Orgs") {}

const Setup = Layer.mergeAll(TrapLayer, Layer.effect(Orgs, Effect.all({ org: register("BYOK Org"), other: register("Other BYOK Org") }))).pipe(
  // Loopback is even allow-listed for plain http: the provider rules, not the allow-list, must keep these out.
  Layer.provideMerge(Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "10.255.255.0/24" }))
)

const onServer = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(effect)))

/** A save as answered (status and JSON body). */
const save = (token: string, provider: string, credentials: Record<string, unknown>) =>
  Effect.flatMap(client(token), (api) => answer(api.providerCredentials.save({ payload: { provider, credentials }, responseMode: "response-only" })))
const statuses = (token: string) =>
  Effect.gen(function* () {
    const [listed, reply] = yield* (yield* client(token)).providerCredentials.list({ responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    return Object.fromEntries(listed.providers.map((item) => [item.slug, item]))
  })
const secretsOf = (orgUuid: string, slug: "direct_a" | "cloud_a" | "cloud_b") =>
  onServer(
    Effect.gen(function* () {
      const service = yield* ProviderCredentials
      return yield* service.credentialsFor(orgUuid, slug)
    })
  )

liveLayer(Setup)((it) => {
  it.describe("provider credentials", () => {
    it.effect("lists all six providers, unconfigured at first", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Fresh BYOK")
        expect(yield* statuses(fresh.key)).toEqual({
          direct_a: { slug: "direct_a", type: "api_key", configured: false, region: null, endpoint: null },
          direct_b: { slug: "direct_b", type: "api_key", configured: false, region: null, endpoint: null },
          direct_c: { slug: "direct_c", type: "api_key", configured: false, region: null, endpoint: null },
          cloud_a: { slug: "cloud_a", type: "cloud_a", configured: false, region: null, endpoint: null },
          cloud_b: { slug: "cloud_b", type: "cloud_b", configured: false, region: null, endpoint: null },
          cloud_c: { slug: "cloud_c", type: "cloud_c", configured: false, region: null, endpoint: null }
        })
      })
    )

    it.effect("saves and merges without echoing secrets; other providers stay; sealed at rest", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const [saved, savedReply] = yield* api.providerCredentials.save({
          payload: { provider: "direct_a", credentials: { api_key: "sk-direct-a-secret-123" } },
          responseMode: "decoded-and-response"
        })
        expect(savedReply.status).toBe(200)
        expect(typeof saved.message).toBe("string")
        // The whole body as sent, not only the fields the contract keeps.
        expect(yield* savedReply.text).not.toContain("sk-direct-a-secret-123")

        expect((yield* save(org.key, "cloud_a", { access_key_id: "AKIAEXAMPLE", secret_access_key: "cloud-secret-456" })).status).toBe(200)
        let items = yield* statuses(org.key)
        expect(items.direct_a!.configured).toBe(true)
        expect(items.cloud_a).toMatchObject({ configured: true, region: "us-east-1", endpoint: null })

        // A later call with only the region keeps the keys and the other provider.
        expect((yield* save(org.key, "cloud_a", { region: "eu-west-1" })).status).toBe(200)
        items = yield* statuses(org.key)
        expect(items.cloud_a!.region).toBe("eu-west-1")
        expect(items.direct_a!.configured).toBe(true)
        expect(yield* secretsOf(org.orgUuid, "cloud_a")).toEqual({ access_key_id: "AKIAEXAMPLE", secret_access_key: "cloud-secret-456", region: "eu-west-1" })

        expect((yield* save(org.key, "cloud_b", { endpoint: "https://models.example.com", api_key: "cloud-b-key" })).status).toBe(200)
        expect((yield* statuses(org.key)).cloud_b).toMatchObject({ configured: true, endpoint: "https://models.example.com", region: null })
        expect(yield* secretsOf(org.orgUuid, "cloud_b")).toMatchObject({ api_version: "2025-04-01-preview" })

        const [, listed] = yield* api.providerCredentials.list({ responseMode: "decoded-and-response" })
        const listedText = yield* listed.text
        for (const secret of ["sk-direct-a-secret-123", "cloud-secret-456", "cloud-b-key"]) expect(listedText).not.toContain(secret)
        const rows = yield* onServer(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            return yield* sql`SELECT sealed, key_id FROM provider_credentials WHERE org_uuid = ${org.orgUuid}`
          })
        )
        expect(rows).toHaveLength(3)
        for (const row of rows as unknown as Array<{ sealed: string; key_id: string }>) {
          expect(row.sealed).not.toMatch(/secret|sk-direct|cloud-b-key|AKIA/)
          expect(row.key_id.length).toBeGreaterThan(0)
        }
      })
    )

    it.effect("validates per type: unknown provider, missing or malformed fields, non-HTTPS endpoints (422)", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const fresh = yield* register("Validating BYOK")
        const unknown = yield* save(fresh.key, "direct_z", { api_key: "x" })
        expect(unknown.status).toBe(422)
        expect(unknown.body.code).toBe("VALIDATION_ERROR")
        const missing = yield* save(fresh.key, "cloud_a", { access_key_id: "AKIA" })
        expect(missing.status).toBe(422)
        expect(missing.body.details.issues).toEqual([{ path: "credentials.secret_access_key", message: "is required" }])
        expect((yield* save(fresh.key, "direct_b", { api_key: "" })).status).toBe(422)
        expect((yield* save(fresh.key, "direct_b", { api_key: 42 })).status).toBe(422)
        expect((yield* save(fresh.key, "cloud_b", { endpoint: "http://models.example.com", api_key: "k" })).status).toBe(422)
        expect((yield* save(fresh.key, "cloud_c", {})).status).toBe(422)
        expect((yield* save(fresh.key, "cloud_c", { project_id: "my-project" })).status).toBe(200)
        expect((yield* statuses(fresh.key)).cloud_c).toMatchObject({ configured: true, region: "us-central1" })
        // Raw: a body without credentials violates the schema on purpose.
        const bare = yield* Effect.promise(() => call(server.url, "POST", "/api/v1/provider-credentials", { token: fresh.key, body: { provider: "direct_a" } }))
        expect(bare.status).toBe(422)
      })
    )

    it.effect("deletes one provider; members cannot change them; other organizations see none", () =>
      Effect.gen(function* () {
        const { other } = yield* Orgs
        const fresh = yield* register("Deleting BYOK")
        const api = yield* client(fresh.key)
        yield* save(fresh.key, "direct_a", { api_key: "a" })
        yield* save(fresh.key, "direct_c", { api_key: "c" })
        const [, removed] = yield* api.providerCredentials.remove({ query: { provider: "direct_a" }, responseMode: "decoded-and-response" })
        expect(removed.status).toBe(200)
        const items = yield* statuses(fresh.key)
        expect(items.direct_a!.configured).toBe(false)
        expect(items.direct_c!.configured).toBe(true)
        expect((yield* api.providerCredentials.remove({ query: { provider: "nope" }, responseMode: "response-only" })).status).toBe(422)

        const teammate = yield* member(fresh, "member")
        expect((yield* save(teammate.key, "direct_b", { api_key: "b" })).status).toBe(403)
        const asTeammate = yield* client(teammate.key)
        expect((yield* asTeammate.providerCredentials.remove({ query: { provider: "direct_c" }, responseMode: "response-only" })).status).toBe(403)
        expect((yield* statuses(teammate.key)).direct_c!.configured).toBe(true)

        expect((yield* statuses(other.key)).direct_c!.configured).toBe(false)
        expect(yield* secretsOf(other.orgUuid, "direct_a")).toBeUndefined()
      })
    )

    it.describe("URL-bearing fields aimed at loopback or a local file", () => {
      const serviceAccount = (overrides: Record<string, unknown>) => {
        const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
        return JSON.stringify({
          type: "service_account",
          project_id: "tenant-project",
          private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
          client_email: "agent@tenant-project.iam.gserviceaccount.com",
          ...overrides
        })
      }
      const hostile = (trap: TrapState) => {
        const loop = `http://127.0.0.1:${trap.port}`
        return {
          cloud_c: [
            { type: "external_account", audience: "x", subject_token_type: "x", token_url: `${loop}/token`, credential_source: { file: trap.file } },
            { type: "external_account", audience: "x", subject_token_type: "x", token_url: `${loop}/token`, credential_source: { url: `${loop}/source` } },
            { type: "authorized_user", client_id: "x", client_secret: "y", refresh_token: "z", token_uri: `${loop}/token` },
            { type: "impersonated_service_account", service_account_impersonation_url: `${loop}/impersonate`, source_credentials: {} }
          ].map((json) => JSON.stringify(json)),
          cloud_c_overrides: [{ token_uri: `${loop}/token` }, { universe_domain: `127.0.0.1.nip.io` }, { credential_source: { file: trap.file } }, { type: "external_account" }],
          cloud_b: [`https://127.0.0.1:${trap.port}`, `https://[::1]:${trap.port}`, `https://localhost:${trap.port}`, `https://0x7f.1:${trap.port}`, `http://127.0.0.1:${trap.port}`, "https://169.254.169.254/"],
          regions: [`x.127.0.0.1.nip.io/#`, `127.0.0.1:${trap.port}/`, "us-east-1.evil.example", "us east 1"]
        }
      }

      it.effect("refuses each when saved (422 naming the field), stores nothing and reaches nothing", () =>
        Effect.gen(function* () {
          const trap = yield* Trap
          const fresh = yield* register("Hostile BYOK")
          const attacks = hostile(trap)
          const refusals: Array<[string, Record<string, unknown>, string]> = [
            ...attacks.cloud_c.map((json): [string, Record<string, unknown>, string] => ["cloud_c", { project_id: "tenant-project", service_account_json: json }, "credentials.service_account_json"]),
            ...attacks.cloud_c_overrides.map((extra): [string, Record<string, unknown>, string] => ["cloud_c", { project_id: "tenant-project", service_account_json: serviceAccount(extra) }, "credentials.service_account_json"]),
            ...attacks.cloud_b.map((endpoint): [string, Record<string, unknown>, string] => ["cloud_b", { endpoint, api_key: "k" }, "credentials.endpoint"]),
            ...attacks.regions.map((region): [string, Record<string, unknown>, string] => ["cloud_a", { access_key_id: "AKIA", secret_access_key: "s", region }, "credentials.region"]),
            ...attacks.regions.map((region): [string, Record<string, unknown>, string] => ["cloud_c", { project_id: "tenant-project", region }, "credentials.region"])
          ]
          for (const [provider, credentials, path] of refusals) {
            const reply = yield* save(fresh.key, provider, credentials)
            expect(reply.status, `${provider} ${JSON.stringify(credentials).slice(0, 120)}`).toBe(422)
            expect(reply.body.details.issues.map((issue: { path: string }) => issue.path)).toContain(path)
          }
          const items = yield* statuses(fresh.key)
          expect(items.cloud_a!.configured || items.cloud_b!.configured || items.cloud_c!.configured).toBe(false)
          // A real key file, with Google's own URL values, is accepted.
          const genuine = serviceAccount({ token_uri: "https://oauth2.googleapis.com/token", universe_domain: "googleapis.com", private_key_id: "abc123" })
          expect((yield* save(fresh.key, "cloud_c", { project_id: "tenant-project", service_account_json: genuine })).status).toBe(200)
          expect(trap.state.connections).toBe(0)
        })
      )

      it.effect("a row that slipped past the checks (an older version, a direct write) is refused before any call", () =>
        Effect.gen(function* () {
          const trap = yield* Trap
          const fresh = yield* register("Tampered BYOK")
          const attacks = hostile(trap)
          const plant = (slug: string, fields: Record<string, string>) =>
            onServer(
              Effect.gen(function* () {
                const { envelope } = yield* Secrets
                const sql = yield* SqlClient.SqlClient
                const sealed = envelope.seal(JSON.stringify(fields), `provider-credentials:${fresh.orgUuid}:${slug}`)
                yield* sql`INSERT INTO provider_credentials (org_uuid, slug, sealed, key_id, region, endpoint)
                  VALUES (${fresh.orgUuid}, ${slug}, ${sealed}, ${envelope.keyIdOf(sealed)}, NULL, NULL)
                  ON CONFLICT (org_uuid, slug) DO UPDATE SET sealed = EXCLUDED.sealed`
              })
            )
          const ask = (model: string) =>
            onServer(
              Effect.gen(function* () {
                const calls = yield* ModelCalls
                return yield* Effect.flip(calls.ask({ orgUuid: fresh.orgUuid, model, system: "s", prompt: "p" }))
              })
            )
          for (const json of attacks.cloud_c) {
            yield* plant("cloud_c", { project_id: "tenant-project", region: "us-central1", service_account_json: json })
            expect((yield* ask("gemini-2.5-pro")).message).toMatch(/service_account/)
          }
          yield* plant("cloud_c", { project_id: "tenant-project", region: "us-central1" })
          expect((yield* ask("gemini-2.5-pro")).message).toMatch(/service_account_json/)
          yield* plant("cloud_c", { project_id: "tenant-project", region: `127.0.0.1:${trap.port}/#`, service_account_json: serviceAccount({}) })
          expect((yield* ask("gemini-2.5-pro")).message).toMatch(/region/)
          for (const endpoint of attacks.cloud_b.filter((url) => url.startsWith("https:"))) {
            yield* plant("cloud_b", { endpoint, api_key: "k", api_version: "2025-04-01-preview" })
            // The call itself goes through the outbound client, whose address rules refuse it.
            expect((yield* ask("gpt-4o")).message).toMatch(/loopback|link-local|not allowed|could not resolve/)
          }
          expect(trap.state.connections).toBe(0)
        })
      )
    })
  })
})
