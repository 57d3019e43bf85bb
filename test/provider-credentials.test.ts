/**
 * Provider credentials (spec 002): merge per provider, never removing others; secrets sealed at
 * rest and never answered; validation per type; delete; owner/admin only; one organization's
 * credentials invisible to another.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { ProviderCredentials } from "../src/provider-credentials/service.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
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
})
