/** Policies over HTTP: CRUD, lifecycle conflicts, validation codes, dry-run, cross-org 404s. */
import { describe, expect, it } from "vitest"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Policies Co"))
const other = useFixture(() => registerOrg(server.url, "Other Co"))

const rules = (extra: Record<string, unknown> = {}) => ({
  name: "Block large payments",
  mode: "rules",
  decision: "deny",
  priority: 10,
  conditions: [{ field: "context.amount", op: "gt", value: 1000 }],
  ...extra
})

const create = async (body: unknown, token = org.key) => call(server.url, "POST", "/api/v1/policies", { token, body })

describe("policies CRUD", () => {
  it("creates a draft by default and an active policy with activate:true", async () => {
    const draft = await create(rules({ scope: { agent_ids: ["bot-1"], action_types: ["payment"] } }))
    expect(draft.status).toBe(201)
    expect(draft.body.id).toMatch(/^pol_/)
    expect(draft.body.status).toBe("draft")
    expect(draft.body.active).toBe(false)
    expect(draft.body.conditions).toEqual([{ field: "context.amount", op: "gt", value: 1000 }])
    expect(draft.body.scope).toEqual({ agent_ids: ["bot-1"], action_types: ["payment"] })

    const active = await create(rules({ activate: true }))
    expect(active.status).toBe(201)
    expect(active.body.status).toBe("active")
    expect(active.body.active).toBe(true)
  })

  it("lists with policies and data, pagination and filters", async () => {
    await create(rules({ name: "a scan", mode: "content_scan", conditions: undefined }))
    const all = await call(server.url, "GET", "/api/v1/policies?per_page=1", { token: org.key })
    expect(all.status).toBe(200)
    expect(all.body.policies).toEqual(all.body.data)
    expect(all.body.policies).toHaveLength(1)
    expect(all.body.pagination.per_page).toBe(1)
    expect(all.body.pagination.has_more).toBe(true)
    const scans = await call(server.url, "GET", "/api/v1/policies?mode=content_scan", { token: org.key })
    expect(scans.body.policies.every((p: any) => p.mode === "content_scan")).toBe(true)
    expect(scans.body.policies.length).toBeGreaterThan(0)
    const active = await call(server.url, "GET", "/api/v1/policies?status=active", { token: org.key })
    expect(active.body.policies.every((p: any) => p.status === "active")).toBe(true)
    const bad = await call(server.url, "GET", "/api/v1/policies?per_page=500", { token: org.key })
    expect(bad.status).toBe(422)
  })

  it("detail carries scope, evaluation_count, last_evaluated_at and the AI fields", async () => {
    const created = await create({
      name: "AI review",
      mode: "ai",
      decision: "require_approval",
      ai_prompt: "Refunds over policy need review",
      ai_models: [await firstModel()]
    })
    expect(created.status).toBe(201)
    const detail = await call(server.url, "GET", `/api/v1/policies/${created.body.id}`, { token: org.key })
    expect(detail.status).toBe(200)
    expect(detail.body.scope).toEqual({ agent_ids: [], action_types: [] })
    expect(detail.body.evaluation_count).toBe(0)
    expect(detail.body.last_evaluated_at).toBeNull()
    expect(detail.body.policy_text).toBe("Refunds over policy need review")
    expect(detail.body.models).toEqual(detail.body.ai_models)
  })

  it("PATCH and PUT update only the given fields; a mode change is INVALID_MODE", async () => {
    const created = await create(rules())
    const id = created.body.id
    const patched = await call(server.url, "PATCH", `/api/v1/policies/${id}`, { token: org.key, body: { priority: 99 } })
    expect(patched.status).toBe(200)
    expect(patched.body.priority).toBe(99)
    expect(patched.body.name).toBe("Block large payments")
    const put = await call(server.url, "PUT", `/api/v1/policies/${id}`, { token: org.key, body: { name: "Renamed" } })
    expect(put.status).toBe(200)
    expect(put.body.name).toBe("Renamed")
    expect(put.body.priority).toBe(99)
    const mode = await call(server.url, "PATCH", `/api/v1/policies/${id}`, { token: org.key, body: { mode: "content_scan" } })
    expect(mode.status).toBe(400)
    expect(mode.body.code).toBe("INVALID_MODE")
    const missing = await call(server.url, "PATCH", "/api/v1/policies/pol_missing", { token: org.key, body: { priority: 1 } })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe("POLICY_NOT_FOUND")
  })

  it("lifecycle: activate, ALREADY_ACTIVE, POLICY_ACTIVE on delete, NOT_ACTIVE, delete", async () => {
    const id = (await create(rules())).body.id
    const on = await call(server.url, "POST", `/api/v1/policies/${id}/activate`, { token: org.key })
    expect(on.status).toBe(200)
    expect(on.body).toMatchObject({ id, status: "active" })
    expect(typeof on.body.activated_at).toBe("string")
    expect((await call(server.url, "POST", `/api/v1/policies/${id}/activate`, { token: org.key })).body.code).toBe("ALREADY_ACTIVE")
    const del = await call(server.url, "DELETE", `/api/v1/policies/${id}`, { token: org.key })
    expect(del.status).toBe(409)
    expect(del.body.code).toBe("POLICY_ACTIVE")
    const off = await call(server.url, "POST", `/api/v1/policies/${id}/deactivate`, { token: org.key })
    expect(off.status).toBe(200)
    expect(off.body).toMatchObject({ id, status: "inactive" })
    expect(typeof off.body.deactivated_at).toBe("string")
    const again = await call(server.url, "POST", `/api/v1/policies/${id}/deactivate`, { token: org.key })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("NOT_ACTIVE")
    const gone = await call(server.url, "DELETE", `/api/v1/policies/${id}`, { token: org.key })
    expect(gone.status).toBe(200)
    expect(gone.body).toMatchObject({ id, deleted: true })
    expect((await call(server.url, "GET", `/api/v1/policies/${id}`, { token: org.key })).status).toBe(404)
  })

  it("dry-run answers the decision and records nothing", async () => {
    const id = (await create(rules({ activate: true }))).body.id
    const body = { action_type: "payment", details: "pay", context: { amount: 5000 } }
    const run = await call(server.url, "POST", `/api/v1/policies/${id}/dry-run`, { token: org.key, body })
    expect(run.status).toBe(200)
    expect(run.body).toMatchObject({ policy_uuid: id, policy_name: "Block large payments", decision: "deny", dry_run: true })
    expect(typeof run.body.confidence).toBe("number")
    const small = await call(server.url, "POST", `/api/v1/policies/${id}/dry-run`, {
      token: org.key,
      body: { ...body, context: { amount: 5 } }
    })
    expect(small.body.decision).toBe("allow")
    const detail = await call(server.url, "GET", `/api/v1/policies/${id}`, { token: org.key })
    expect(detail.body.evaluation_count).toBe(0)
    expect(detail.body.last_evaluated_at).toBeNull()
  })
})

const firstModel = async () => {
  const { BUILTIN_MODELS } = await import("../protocol/models.js")
  return BUILTIN_MODELS[0]!.model_id
}

describe("policy validation", () => {
  it("answers the spec's 400 codes", async () => {
    const model = await firstModel()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "x", mode: "magic", decision: "deny" }, "INVALID_MODE"],
      [{ name: "x", mode: "rules", decision: "deny" }, "CONDITIONS_REQUIRED"],
      [{ name: "x", mode: "ai", decision: "deny", ai_models: [model] }, "POLICY_TEXT_REQUIRED"],
      [{ name: "x", mode: "ai", decision: "deny", ai_prompt: "p" }, "MODELS_REQUIRED"],
      [{ name: "x", mode: "consensus", decision: "deny", ai_prompt: "p", ai_models: [model] }, "MODELS_REQUIRED"],
      [{ name: "x", mode: "ai", decision: "deny", ai_prompt: "p", ai_models: ["no-such-model"] }, "INVALID_MODEL"],
      [{ name: "x", mode: "rules", decision: "deny", conditions: [{ field: "details", op: "regex", value: "(a" }] }, "INVALID_REGEX"]
    ]
    for (const [body, code] of cases) {
      const reply = await create(body)
      expect({ code: reply.body.code, status: reply.status }).toEqual({ code, status: 400 })
    }
  })

  it("answers 422 VALIDATION_ERROR for shapes", async () => {
    const badDecision = await create({ name: "x", mode: "rules", decision: "maybe", conditions: [] })
    expect(badDecision.status).toBe(422)
    expect(badDecision.body.code).toBe("VALIDATION_ERROR")
    const badCondition = await create(rules({ conditions: [{ field: "nope", op: "eq", value: 1 }] }))
    expect(badCondition.status).toBe(422)
    expect(badCondition.body.details.issues.length).toBeGreaterThan(0)
  })

  it("needs policies:write to create and allows policies:read to list", async () => {
    const key = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "ro", scopes: ["policies:read"] } })
    expect(key.status).toBe(201)
    expect((await create(rules(), key.body.key)).status).toBe(403)
    expect((await call(server.url, "GET", "/api/v1/policies", { token: key.body.key })).status).toBe(200)
  })
})

describe("cross-organization access", () => {
  it("answers 404 POLICY_NOT_FOUND for every id route", async () => {
    const id = (await create(rules())).body.id
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/api/v1/policies/${id}`],
      ["PATCH", `/api/v1/policies/${id}`, { priority: 1 }],
      ["PUT", `/api/v1/policies/${id}`, { priority: 1 }],
      ["DELETE", `/api/v1/policies/${id}`],
      ["POST", `/api/v1/policies/${id}/activate`],
      ["POST", `/api/v1/policies/${id}/deactivate`],
      ["POST", `/api/v1/policies/${id}/dry-run`, { action_type: "a", details: "b" }]
    ]
    for (const [method, path, body] of routes) {
      const reply = await call(server.url, method, path, { token: other.key, body })
      expect({ path, method, status: reply.status, code: reply.body.code }).toEqual({ path, method, status: 404, code: "POLICY_NOT_FOUND" })
    }
    // Still there for its owner.
    expect((await call(server.url, "GET", `/api/v1/policies/${id}`, { token: org.key })).status).toBe(200)
  })

  it("a member reads and dry-runs policies but cannot change them; an admin can", async () => {
    const guard = await call(server.url, "POST", "/api/v1/policies", {
      token: org.key,
      body: { name: "owner guard", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "wipe" }], activate: true }
    })
    const id = guard.body.id as string
    const member = await addMember(server.url, org, "member")
    expect((await call(server.url, "GET", "/api/v1/policies", { token: member.key })).status).toBe(200)
    expect((await call(server.url, "POST", `/api/v1/policies/${id}/dry-run`, { token: member.key, body: { action_type: "wipe", details: "d" } })).status).toBe(200)
    const attempts: Array<[string, string, unknown]> = [
      ["POST", `/api/v1/policies/${id}/deactivate`, undefined],
      ["PATCH", `/api/v1/policies/${id}`, { conditions: [{ field: "action_type", op: "eq", value: "never" }] }],
      ["PUT", `/api/v1/policies/${id}`, { priority: -5 }],
      ["DELETE", `/api/v1/policies/${id}`, undefined],
      ["POST", "/api/v1/policies", { name: "block all", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "neq", value: "" }], activate: true }]
    ]
    for (const [method, path, body] of attempts) {
      for (const token of [member.key, member.token]) {
        const reply = await call(server.url, method, path, { token, body })
        expect({ method, path, status: reply.status, code: reply.body.code }).toEqual({ method, path, status: 403, code: "FORBIDDEN" })
      }
    }
    expect((await call(server.url, "GET", `/api/v1/policies/${id}`, { token: org.key })).body.status).toBe("active")
    const admin = await addMember(server.url, org, "admin")
    expect((await call(server.url, "POST", `/api/v1/policies/${id}/deactivate`, { token: admin.key })).status).toBe(200)
  })
})
