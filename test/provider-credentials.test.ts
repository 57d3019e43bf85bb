/**
 * Provider credentials (spec 002): merge per provider, never removing others; secrets sealed at
 * rest and never answered; validation per type; delete; owner/admin only; one organization's
 * credentials invisible to another.
 */
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { ModelCalls } from "../src/models/calls.js"
import { Secrets } from "../src/platform/secrets.js"
import { ProviderCredentials } from "../src/provider-credentials/service.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

/** A loopback listener that counts every connection, and a file holding a canary secret: the targets of the attacks below. */
const trap = useFixture(
  async () => {
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
  },
  async ({ listener, directory }) => {
    rmSync(directory, { recursive: true, force: true })
    await new Promise<void>((resolve) => listener.close(() => resolve()))
  }
)
// Loopback is even allow-listed for plain http: the provider rules, not the allow-list, must keep these out.
const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "10.255.255.0/24" })
const org = useFixture(() => registerOrg(server.url, "BYOK Org"))
const other = useFixture(() => registerOrg(server.url, "Other BYOK Org"))

const save = (token: string, provider: string, credentials: unknown) => call(server.url, "POST", "/api/v1/provider-credentials", { token, body: { provider, credentials } })
const statuses = async (token: string) => {
  const reply = await call(server.url, "GET", "/api/v1/provider-credentials", { token })
  expect(reply.status).toBe(200)
  return Object.fromEntries(reply.body.providers.map((item: any) => [item.slug, item]))
}
const secretsOf = (orgUuid: string, slug: "direct_a" | "cloud_a" | "cloud_b") =>
  server.run(
    Effect.gen(function* () {
      const service = yield* ProviderCredentials
      return yield* service.credentialsFor(orgUuid, slug)
    })
  )

describe("provider credentials", () => {
  it("lists all six providers, unconfigured at first", async () => {
    const fresh = await registerOrg(server.url, "Fresh BYOK")
    expect(await statuses(fresh.key)).toEqual({
      direct_a: { slug: "direct_a", type: "api_key", configured: false, region: null, endpoint: null },
      direct_b: { slug: "direct_b", type: "api_key", configured: false, region: null, endpoint: null },
      direct_c: { slug: "direct_c", type: "api_key", configured: false, region: null, endpoint: null },
      cloud_a: { slug: "cloud_a", type: "cloud_a", configured: false, region: null, endpoint: null },
      cloud_b: { slug: "cloud_b", type: "cloud_b", configured: false, region: null, endpoint: null },
      cloud_c: { slug: "cloud_c", type: "cloud_c", configured: false, region: null, endpoint: null }
    })
  })

  it("saves and merges without echoing secrets; other providers stay; sealed at rest", async () => {
    const saved = await save(org.key, "direct_a", { api_key: "sk-direct-a-secret-123" })
    expect(saved.status).toBe(200)
    expect(typeof saved.body.message).toBe("string")
    expect(saved.text).not.toContain("sk-direct-a-secret-123")

    expect((await save(org.key, "cloud_a", { access_key_id: "AKIAEXAMPLE", secret_access_key: "cloud-secret-456" })).status).toBe(200)
    let items = await statuses(org.key)
    expect(items.direct_a.configured).toBe(true)
    expect(items.cloud_a).toMatchObject({ configured: true, region: "us-east-1", endpoint: null })

    // A later call with only the region keeps the keys and the other provider.
    expect((await save(org.key, "cloud_a", { region: "eu-west-1" })).status).toBe(200)
    items = await statuses(org.key)
    expect(items.cloud_a.region).toBe("eu-west-1")
    expect(items.direct_a.configured).toBe(true)
    expect(await secretsOf(org.orgUuid, "cloud_a")).toEqual({ access_key_id: "AKIAEXAMPLE", secret_access_key: "cloud-secret-456", region: "eu-west-1" })

    expect((await save(org.key, "cloud_b", { endpoint: "https://models.example.com", api_key: "cloud-b-key" })).status).toBe(200)
    expect((await statuses(org.key)).cloud_b).toMatchObject({ configured: true, endpoint: "https://models.example.com", region: null })
    expect(await secretsOf(org.orgUuid, "cloud_b")).toMatchObject({ api_version: "2025-04-01-preview" })

    const listed = await call(server.url, "GET", "/api/v1/provider-credentials", { token: org.key })
    for (const secret of ["sk-direct-a-secret-123", "cloud-secret-456", "cloud-b-key"]) expect(listed.text).not.toContain(secret)
    const rows = await server.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT sealed, key_id FROM provider_credentials WHERE org_uuid = ${org.orgUuid}`
      })
    )
    expect(rows).toHaveLength(3)
    for (const row of rows as Array<{ sealed: string; key_id: string }>) {
      expect(row.sealed).not.toMatch(/secret|sk-direct|cloud-b-key|AKIA/)
      expect(row.key_id.length).toBeGreaterThan(0)
    }
  })

  it("validates per type: unknown provider, missing or malformed fields, non-HTTPS endpoints (422)", async () => {
    const fresh = await registerOrg(server.url, "Validating BYOK")
    const unknown = await save(fresh.key, "direct_z", { api_key: "x" })
    expect(unknown.status).toBe(422)
    expect(unknown.body.code).toBe("VALIDATION_ERROR")
    const missing = await save(fresh.key, "cloud_a", { access_key_id: "AKIA" })
    expect(missing.status).toBe(422)
    expect(missing.body.details.issues).toEqual([{ path: "credentials.secret_access_key", message: "is required" }])
    expect((await save(fresh.key, "direct_b", { api_key: "" })).status).toBe(422)
    expect((await save(fresh.key, "direct_b", { api_key: 42 })).status).toBe(422)
    expect((await save(fresh.key, "cloud_b", { endpoint: "http://models.example.com", api_key: "k" })).status).toBe(422)
    expect((await save(fresh.key, "cloud_c", {})).status).toBe(422)
    expect((await save(fresh.key, "cloud_c", { project_id: "my-project" })).status).toBe(200)
    expect((await statuses(fresh.key)).cloud_c).toMatchObject({ configured: true, region: "us-central1" })
    expect((await call(server.url, "POST", "/api/v1/provider-credentials", { token: fresh.key, body: { provider: "direct_a" } })).status).toBe(422)
  })

  it("deletes one provider; members cannot change them; other organizations see none", async () => {
    const fresh = await registerOrg(server.url, "Deleting BYOK")
    await save(fresh.key, "direct_a", { api_key: "a" })
    await save(fresh.key, "direct_c", { api_key: "c" })
    const removed = await call(server.url, "DELETE", "/api/v1/provider-credentials?provider=direct_a", { token: fresh.key })
    expect(removed.status).toBe(200)
    const items = await statuses(fresh.key)
    expect(items.direct_a.configured).toBe(false)
    expect(items.direct_c.configured).toBe(true)
    expect((await call(server.url, "DELETE", "/api/v1/provider-credentials?provider=nope", { token: fresh.key })).status).toBe(422)

    const member = await addMember(server.url, fresh, "member")
    expect((await save(member.key, "direct_b", { api_key: "b" })).status).toBe(403)
    expect((await call(server.url, "DELETE", "/api/v1/provider-credentials?provider=direct_c", { token: member.key })).status).toBe(403)
    expect((await statuses(member.key)).direct_c.configured).toBe(true)

    expect((await statuses(other.key)).direct_c.configured).toBe(false)
    expect(await secretsOf(other.orgUuid, "direct_a")).toBeUndefined()
  })

  describe("URL-bearing fields aimed at loopback or a local file", () => {
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
    const hostile = () => {
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

    it("refuses each when saved (422 naming the field), stores nothing and reaches nothing", async () => {
      const fresh = await registerOrg(server.url, "Hostile BYOK")
      const attacks = hostile()
      const refusals: Array<[string, Record<string, unknown>, string]> = [
        ...attacks.cloud_c.map((json): [string, Record<string, unknown>, string] => ["cloud_c", { project_id: "tenant-project", service_account_json: json }, "credentials.service_account_json"]),
        ...attacks.cloud_c_overrides.map((extra): [string, Record<string, unknown>, string] => ["cloud_c", { project_id: "tenant-project", service_account_json: serviceAccount(extra) }, "credentials.service_account_json"]),
        ...attacks.cloud_b.map((endpoint): [string, Record<string, unknown>, string] => ["cloud_b", { endpoint, api_key: "k" }, "credentials.endpoint"]),
        ...attacks.regions.map((region): [string, Record<string, unknown>, string] => ["cloud_a", { access_key_id: "AKIA", secret_access_key: "s", region }, "credentials.region"]),
        ...attacks.regions.map((region): [string, Record<string, unknown>, string] => ["cloud_c", { project_id: "tenant-project", region }, "credentials.region"])
      ]
      for (const [provider, credentials, path] of refusals) {
        const reply = await save(fresh.key, provider, credentials)
        expect(reply.status, `${provider} ${JSON.stringify(credentials).slice(0, 120)}`).toBe(422)
        expect(reply.body.details.issues.map((issue: { path: string }) => issue.path)).toContain(path)
      }
      const items = await statuses(fresh.key)
      expect(items.cloud_a.configured || items.cloud_b.configured || items.cloud_c.configured).toBe(false)
      // A real key file, with Google's own URL values, is accepted.
      const genuine = serviceAccount({ token_uri: "https://oauth2.googleapis.com/token", universe_domain: "googleapis.com", private_key_id: "abc123" })
      expect((await save(fresh.key, "cloud_c", { project_id: "tenant-project", service_account_json: genuine })).status).toBe(200)
      expect(trap.state.connections).toBe(0)
    })

    it("a row that slipped past the checks (an older version, a direct write) is refused before any call", async () => {
      const fresh = await registerOrg(server.url, "Tampered BYOK")
      const attacks = hostile()
      const plant = (slug: string, fields: Record<string, string>) =>
        server.run(
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
        server.run(
          Effect.gen(function* () {
            const calls = yield* ModelCalls
            return yield* Effect.flip(calls.ask({ orgUuid: fresh.orgUuid, model, system: "s", prompt: "p" }))
          })
        )
      for (const json of attacks.cloud_c) {
        await plant("cloud_c", { project_id: "tenant-project", region: "us-central1", service_account_json: json })
        expect((await ask("gemini-2.5-pro")).message).toMatch(/service_account/)
      }
      await plant("cloud_c", { project_id: "tenant-project", region: "us-central1" })
      expect((await ask("gemini-2.5-pro")).message).toMatch(/service_account_json/)
      await plant("cloud_c", { project_id: "tenant-project", region: `127.0.0.1:${trap.port}/#`, service_account_json: serviceAccount({}) })
      expect((await ask("gemini-2.5-pro")).message).toMatch(/region/)
      for (const endpoint of attacks.cloud_b.filter((url) => url.startsWith("https:"))) {
        await plant("cloud_b", { endpoint, api_key: "k", api_version: "2025-04-01-preview" })
        // The call itself goes through the outbound client, whose address rules refuse it.
        expect((await ask("gpt-4o")).message).toMatch(/loopback|link-local|not allowed|could not resolve/)
      }
      expect(trap.state.connections).toBe(0)
    })
  })
})
