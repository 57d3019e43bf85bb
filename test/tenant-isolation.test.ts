/**
 * Tenant isolation, generated from the route table: every authenticated route
 * that takes an id is called by a second organization — with its owner's JWT
 * (which passes every role and scope check, so only the tenancy check can
 * answer) and with its API key — on an object of the first organization. The
 * answer must be 404, never 403 or a success. A new route with an id and no
 * fixture here fails the test.
 */
import { Effect } from "effect"
import { HttpApi } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { beforeAll, describe, expect, it } from "vitest"
import { GatewayApi } from "../protocol/api.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

interface Route {
  readonly method: string
  readonly path: string
}

const authenticatedRoutesWithIds: Route[] = []
HttpApi.reflect(GatewayApi, {
  onGroup() {},
  onEndpoint({ endpoint, middleware }) {
    const authenticated = [...middleware].some((m: any) => m.key === "gateway/Authenticated")
    if (authenticated && endpoint.path.includes(":")) authenticatedRoutesWithIds.push({ method: endpoint.method, path: endpoint.path })
  }
})

const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "", OUTBOUND_ALLOW_HTTP: "false" })
const a = useFixture(() => registerOrg(server.url, "Tenant A"))
const b = useFixture(() => registerOrg(server.url, "Tenant B"))
const ids: Record<string, string> = {}

beforeAll(async () => {
  const admin = await addMember(server.url, a, "admin")
  ids.user_uuid = admin.userUuid
  ids.key_id = (await call(server.url, "POST", "/api/v1/api-keys", { token: a.key, body: { name: "victim" } })).body.id

  const pending = await call(server.url, "POST", "/api/v1/actions", {
    token: a.key,
    body: { action_type: "transfer", details: "pay 10 EUR", agent_id: "agent-a", require_approval: true }
  })
  expect(pending.status).toBe(201)
  ids.action_uuid = pending.body.action_uuid

  const done = await call(server.url, "POST", "/api/v1/actions", { token: a.key, body: { action_type: "lookup", details: "read a record", agent_id: "agent-a" } })
  const notarized = await call(server.url, "POST", `/api/v1/actions/${done.body.action_uuid}/notarize`, { token: a.key, body: { outcome: "completed" } })
  expect(notarized.status).toBe(200)
  ids.receipt_uuid = notarized.body.receipt_uuid
  const settlement = await call(server.url, "POST", "/api/v1/settlements", { token: a.key })
  expect(settlement.status).toBe(201)
  ids.settlement_uuid = settlement.body.id
  const bundle = await call(server.url, "POST", "/api/v1/compliance/bundles", {
    token: a.key,
    body: { framework: "raw", period_start: new Date(Date.now() - 3_600_000).toISOString(), period_end: new Date(Date.now() + 3_600_000).toISOString() }
  })
  expect(bundle.status).toBe(201)
  ids.bundle_uuid = bundle.body.id

  const policy = await call(server.url, "POST", "/api/v1/policies", {
    token: a.key,
    body: { name: "block big", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "nuke" }] }
  })
  expect(policy.status).toBe(201)
  ids.policy_uuid = policy.body.id

  const entry = await call(server.url, "POST", "/api/v1/endpoint-whitelist", { token: a.token, body: { url_pattern: "https://api.example.com/*", name: "example" } })
  expect(entry.status).toBeLessThan(300)
  ids.whitelist_id = entry.body.id
  await call(server.url, "PUT", "/api/v1/endpoint-whitelist/settings", { token: a.token, body: { mode: "strict" } })
  const blocked = await call(server.url, "POST", "/api/v1/actions", {
    token: a.key,
    body: { action_type: "call", details: "call an API", endpoint_url: "https://elsewhere.example.org/v1/x" }
  })
  expect(blocked.status).toBe(403)
  ids.approval_id = blocked.body.details.approval_id

  const webhook = await call(server.url, "POST", "/api/v1/webhooks", { token: a.key, body: { url: "https://hooks.example.com/gateway" } })
  expect(webhook.status).toBe(201)
  ids.webhook_id = webhook.body.id

  ids.agent_slug = `victim-agent-${process.pid}-${Date.now().toString(36)}`
  const agent = await call(server.url, "POST", "/api/v1/agents", { token: a.key, body: { agent_slug: ids.agent_slug, name: "Victim agent" } })
  expect(agent.status).toBe(201)

  const custom = await call(server.url, "POST", "/api/v1/models/custom", {
    token: a.key,
    body: { name: "Victim model", model_id: "victim-model", endpoint_url: "https://models.example.com/v1", auth_header: "Bearer victim" }
  })
  expect(custom.status).toBe(201)
  ids.custom_model_id = custom.body.id

  const evidence = await call(server.url, "POST", "/api/v1/evidence/packages", { token: a.key, body: { action_uuids: [ids.action_uuid], title: "victim package" } })
  expect(evidence.status).toBe(201)
  ids.package_uuid = evidence.body.package_uuid
  const report = await call(server.url, "POST", "/api/v1/compliance/reports", {
    token: a.key,
    body: { framework: "eu_ai_act_art12", period_start: new Date(Date.now() - 3_600_000).toISOString(), period_end: new Date(Date.now() + 3_600_000).toISOString() }
  })
  expect(report.body.status).toBe("ready")
  ids.report_uuid = report.body.id
  const escrow = await call(server.url, "POST", "/api/v1/escrow/accounts", { token: a.key, body: { purpose: "victim" } })
  expect(escrow.status).toBe(201)
  ids.account_uuid = escrow.body.account_uuid
  expect((await call(server.url, "POST", `/api/v1/escrow/accounts/${ids.account_uuid}/deposit`, { token: a.key, body: { amount: "10.00" } })).status).toBe(201)

  const incident = await call(server.url, "POST", "/api/v1/dora/incidents", {
    token: a.key,
    body: { title: "victim incident", description: "d", detected_at: new Date().toISOString() }
  })
  expect(incident.status).toBe(201)
  ids.dora_incident = incident.body.uuid
  const vendor = { vendor_name: "Victim vendor", service_description: "hosting", service_type: "saas", criticality: "supporting" }
  const thirdParty = await call(server.url, "POST", "/api/v1/dora/third-parties", { token: a.key, body: vendor })
  expect(thirdParty.status).toBe(201)
  ids.dora_third_party = thirdParty.body.uuid
  const doraTest = await call(server.url, "POST", "/api/v1/dora/tests", {
    token: a.key,
    body: { test_type: "other", title: "victim test", scope: "s", conducted_at: "2026-01-01", conducted_by: "me", status: "passed" }
  })
  expect(doraTest.status).toBe(201)
  ids.dora_test = doraTest.body.uuid

  ids.github_repository = `victim-owner/victim-repo-${process.pid}`
  const github = await call(server.url, "PUT", "/api/v1/code-review/github", { token: a.key, body: { api_token: "ghp_victim", repositories: [ids.github_repository] } })
  expect(github.status).toBe(200)

  // A case needs models that answer: two built-in models without credentials fail, so the case
  // row is written directly, as a completed case that waits for review.
  ids.case_id = `case_victim_${process.pid}`
  await server.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO cases (case_id, org_uuid, status, request_hash, details_hash, models, review_threshold, consensus, receipt, review_status, created_at)
                 VALUES (${ids.case_id!}, ${a.orgUuid}, 'complete', 'h', 'sha256:00', '[]', 0.4, ${JSON.stringify({ decision: "MIXED", text: "split", confidence_score: 0.4, disagreement_score: 0.5, requires_human_review: true, human_review_reason: "split" })}::jsonb, NULL, 'pending', now())`
    })
  )
})

/**
 * Which fixture id each path parameter takes, and a body that passes validation. `path` replaces
 * the whole route when it has several parameters; `unconnected` marks a read by name within the
 * caller's organization, which answers another organization's name as an empty 200
 * (`repository_connected: false`) rather than 404.
 */
const fixture = (route: Route): { id: string; body?: unknown; path?: string; unconnected?: boolean } | undefined => {
  const { path } = route
  if (path.startsWith("/api/v1/webhooks/github/violations/")) {
    return { id: ids.github_repository!, path: `/api/v1/webhooks/github/violations/${ids.github_repository}/1`, unconnected: true }
  }
  if (path.includes(":user_uuid")) return { id: ids.user_uuid!, body: { role: "member" } }
  if (path.includes(":key_id")) return { id: ids.key_id! }
  // The bundle fills the first parameter; an inclusion proof's `:receipt_uuid` stays literal, so the bundle decides the 404.
  if (path.includes(":bundle_uuid")) return { id: ids.bundle_uuid! }
  if (path.includes(":receipt_uuid")) return { id: ids.receipt_uuid! }
  if (path.includes(":settlement_uuid")) return { id: ids.settlement_uuid! }
  if (path.includes(":action_uuid")) {
    if (path.endsWith("/notarize")) return { id: ids.action_uuid!, body: { outcome: "completed" } }
    if (path.endsWith("/dashboard-deny")) return { id: ids.action_uuid!, body: { reason: "no" } }
    if (path.endsWith("/mutual-sign/request")) return { id: ids.action_uuid!, body: { counterparty_did: "did:web:bank.example" } }
    return { id: ids.action_uuid!, body: route.method === "POST" ? {} : undefined }
  }
  if (path.includes(":policy_uuid")) {
    if (path.endsWith("/dry-run")) return { id: ids.policy_uuid!, body: { action_type: "nuke", details: "x" } }
    if (route.method === "PATCH" || route.method === "PUT") return { id: ids.policy_uuid!, body: { name: "renamed" } }
    return { id: ids.policy_uuid! }
  }
  if (path.startsWith("/api/v1/endpoint-whitelist/:id")) return { id: ids.whitelist_id! }
  if (path.startsWith("/api/v1/endpoint-approvals/:id")) return { id: ids.approval_id!, body: { add_pattern: true } }
  if (path.includes(":webhook_id")) return { id: ids.webhook_id! }
  if (path.includes(":package_uuid")) return { id: ids.package_uuid! }
  if (path.includes(":report_uuid")) return { id: ids.report_uuid! }
  if (path.includes(":case_id")) return { id: ids.case_id!, body: route.method === "POST" ? { reason: "hostile" } : undefined }
  if (path.startsWith("/api/v1/models/custom/:id")) return { id: ids.custom_model_id!, body: route.method === "PUT" ? { name: "taken over" } : undefined }
  if (path.includes(":account_uuid")) {
    if (path.endsWith("/deposit") || path.endsWith("/release")) return { id: ids.account_uuid!, body: { amount: "1.00" } }
    if (path.endsWith("/dispute")) return { id: ids.account_uuid!, body: { amount: "1.00", reason: "hostile" } }
    if (path.endsWith("/dispute/resolve")) return { id: ids.account_uuid!, body: { resolution: "dismissed" } }
    return { id: ids.account_uuid! }
  }
  if (path.startsWith("/api/v1/dora/incidents/:uuid")) {
    if (path.endsWith("/classify")) return { id: ids.dora_incident!, body: { severity: "low", category: "other" } }
    if (path.endsWith("/resolve")) return { id: ids.dora_incident!, body: { resolution_summary: "hostile" } }
    return { id: ids.dora_incident! }
  }
  if (path.startsWith("/api/v1/dora/third-parties/:uuid")) return { id: ids.dora_third_party!, body: route.method === "PUT" ? { vendor_name: "taken over" } : undefined }
  if (path.startsWith("/api/v1/dora/tests/:uuid")) return { id: ids.dora_test! }
  // Flags are platform-wide: turning off one the caller's organization never had answers 404.
  if (path.startsWith("/api/v1/feature-flags/:key")) return { id: "flag_absent_for_tenant_probe", body: { enabled: false } }
  // Drift names agents by the agent_id actions carry ("agent-a" has actions in A); an alert path's
  // :alert_id stays literal, the agent already decides the 404.
  if (path.includes(":agent_id")) {
    if (path.endsWith("/baseline")) return { id: "agent-a", body: { window_start: "2026-01-01T00:00:00Z", window_end: "2026-01-02T00:00:00Z" } }
    if (path.endsWith("/baseline/synthetic")) return { id: "agent-a", body: { expected_distribution: { transfer: 1 }, expected_actions_per_day: 1 } }
    if (path.endsWith("/baseline/pooled"))
      return { id: "agent-a", body: { source_agent_ids: ["agent-a"], window_start: "2026-01-01T00:00:00Z", window_end: "2026-01-02T00:00:00Z" } }
    return { id: "agent-a" }
  }
  if (path.includes(":agent_slug")) {
    if (path.endsWith("/versions") && route.method === "POST") return { id: ids.agent_slug!, body: { version: "9.9.9", instruction_hash: "sha256:x" } }
    if (path.endsWith("/decommission") || path.endsWith("/credentials/revoke")) return { id: ids.agent_slug!, body: { reason: "hostile" } }
    if (path.endsWith("/transfer")) return { id: ids.agent_slug!, body: { target_org_id: "org_hostile", signature: "hmac-sha256:00" } }
    if (path.endsWith("/will")) return { id: ids.agent_slug!, body: route.method === "PUT" ? { succession_policy: "archive" } : undefined }
    if (path.endsWith("/death-certificate")) return { id: ids.agent_slug!, body: route.method === "POST" ? { cause: "hostile" } : undefined }
    return { id: ids.agent_slug!, body: route.method === "PUT" ? { name: "taken over" } : undefined }
  }
  return undefined
}

const concrete = (path: string, id: string) => path.replace(/:[a-z_]+/, encodeURIComponent(id))

describe("tenant isolation", () => {
  it("has a fixture for every authenticated route with an id", () => {
    expect(authenticatedRoutesWithIds.length).toBeGreaterThan(20)
    const missing = authenticatedRoutesWithIds.filter((route) => fixture(route) === undefined).map((r) => `${r.method} ${r.path}`)
    expect(missing).toEqual([])
  })

  it("answers 404 to another organization's JWT and key on every such route", async () => {
    const leaks: string[] = []
    for (const route of authenticatedRoutesWithIds) {
      const target = fixture(route)!
      const path = target.path ?? concrete(route.path, target.id)
      if (target.unconnected) {
        for (const token of [b.token, b.key]) {
          const reply = await call(server.url, route.method, path, { token })
          const empty = reply.status === 200 && reply.body?.repository_connected === false && reply.body?.pull_request === null && reply.body?.data?.length === 0
          if (!empty) leaks.push(`${route.method} ${route.path} → ${reply.status} ${reply.text.slice(0, 120)}`)
        }
        continue
      }
      const withJwt = await call(server.url, route.method, path, { token: b.token, body: target.body })
      if (withJwt.status !== 404) leaks.push(`${route.method} ${route.path} (JWT) → ${withJwt.status} ${withJwt.text.slice(0, 120)}`)
      const withKey = await call(server.url, route.method, path, { token: b.key, body: target.body })
      const jwtOnly = withKey.status === 401 && withKey.body?.code === "UNAUTHORIZED"
      if (withKey.status !== 404 && !jwtOnly) leaks.push(`${route.method} ${route.path} (key) → ${withKey.status} ${withKey.text.slice(0, 120)}`)
    }
    // The receipt export's PDF form is the same route with another query: it must not leak either.
    for (const token of [b.token, b.key]) {
      const pdf = await call(server.url, "GET", `/api/v1/receipts/${ids.receipt_uuid}/export?format=pdf`, { token })
      if (pdf.status !== 404) leaks.push(`GET receipt export as PDF → ${pdf.status}`)
    }
    expect(leaks).toEqual([])
  })

  it("left the first organization's objects untouched", async () => {
    const bundleProof = await call(server.url, "GET", `/api/v1/compliance/bundles/${ids.bundle_uuid}/inclusion-proof/${ids.receipt_uuid}`, { token: a.key })
    expect(bundleProof.body).toMatchObject({ bundle_uuid: ids.bundle_uuid, receipt_uuid: ids.receipt_uuid })
    const action = await call(server.url, "GET", `/api/v1/actions/${ids.action_uuid}`, { token: a.key })
    expect(action.body.status).toBe("pending_approval")
    expect(action.body.legal_hold).toBe(false)
    const policy = await call(server.url, "GET", `/api/v1/policies/${ids.policy_uuid}`, { token: a.key })
    expect(policy.body.name).toBe("block big")
    const keys = await call(server.url, "GET", "/api/v1/api-keys", { token: a.key })
    expect(keys.body.data.find((k: any) => k.id === ids.key_id).revoked_at).toBeNull()
    const hooks = await call(server.url, "GET", "/api/v1/webhooks", { token: a.key })
    expect(hooks.body.map((h: any) => h.id)).toContain(ids.webhook_id)
    const agent = await call(server.url, "GET", `/api/v1/agents/${ids.agent_slug}`, { token: a.key })
    expect(agent.body).toMatchObject({ name: "Victim agent", status: "active", versions: [] })
    const did = await call(server.url, "GET", `/api/v1/agents/${ids.agent_slug}/did`, { token: a.key })
    expect(did.body.version).toBe(1)
    const credential = await call(server.url, "GET", `/api/v1/agents/${ids.agent_slug}/credential`)
    expect(credential.body.credential).not.toBeNull()
    const custom = await call(server.url, "GET", `/api/v1/models/custom/${ids.custom_model_id}`, { token: a.key })
    expect(custom.body).toMatchObject({ name: "Victim model", has_auth: true, status: "untested" })
    const account = await call(server.url, "GET", `/api/v1/escrow/accounts/${ids.account_uuid}`, { token: a.key })
    expect(account.body).toMatchObject({ balance: "10.00", status: "active", transaction_count: 1, disputes: [] })
    const victimCase = await call(server.url, "GET", `/api/v1/cases/${ids.case_id}`, { token: a.key })
    expect(victimCase.body.review.status).toBe("pending")
    const incident = await call(server.url, "GET", `/api/v1/dora/incidents/${ids.dora_incident}`, { token: a.key })
    expect(incident.body).toMatchObject({ status: "detected", severity: null })
    const vendor = await call(server.url, "GET", `/api/v1/dora/third-parties/${ids.dora_third_party}`, { token: a.key })
    expect(vendor.body.vendor_name).toBe("Victim vendor")
    const report = await call(server.url, "GET", `/api/v1/compliance/reports/${ids.report_uuid}/verify`, { token: a.key })
    expect(report.body.valid).toBe(true)
    const proof = await call(server.url, "GET", `/api/v1/settlements/inclusion-proof/${ids.receipt_uuid}`, { token: a.key })
    expect(proof.body.settlement_uuid).toBe(ids.settlement_uuid)
    const github = await call(server.url, "GET", "/api/v1/code-review/github", { token: a.key })
    expect(github.body).toMatchObject({ configured: true, has_api_token: true, repositories: [ids.github_repository] })
    const connected = await call(server.url, "GET", `/api/v1/webhooks/github/violations/${ids.github_repository}/1`, { token: a.key })
    expect(connected.body.repository_connected).toBe(true)
  })
})
