/**
 * Deleting an account removes the organization and everything it owns (spec:
 * "all its cases, receipts, keys, members and audit logs"). The check is
 * generated from the schema: every table with an `org_uuid` column, so a table
 * added later is covered without touching this test.
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { organizationTables } from "../src/platform/sql.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { enableApprovalMail, useInbox } from "./support/mail.js"
import { useServer } from "./support/server.js"

const inbox = useInbox()
const server = useServer(() => ({ SMTP_URL: inbox.url }))

/** Rows naming `orgUuid` per table, for every base table with an org_uuid column. */
const rowsPerTable = (orgUuid: string) =>
  server.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const counts: Record<string, number> = {}
      for (const table_name of yield* organizationTables(sql)) {
        const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table_name)} WHERE org_uuid = ${orgUuid}`
        counts[table_name] = rows[0]!.n
      }
      return counts
    })
  )

describe("deleting an account", () => {
  it("removes every row of the organization in every table, and nothing of another organization", async () => {
    const base = server.url
    const org = await registerOrg(base, "Doomed")
    const survivor = await registerOrg(base, "Survivor")
    await enableApprovalMail(base, org)
    const member = await addMember(base, org, "member")
    for (const owner of [org, survivor]) {
      await call(base, "POST", "/api/v1/policies", {
        token: owner.key,
        body: { name: "deny x", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "x" }], activate: true }
      })
      await call(base, "POST", "/api/v1/actions", { token: owner.key, body: { action_type: "x", details: "denied" } })
      const done = await call(base, "POST", "/api/v1/actions", { token: owner.key, body: { action_type: "y", details: "d", idempotency_key: "k1" } })
      await call(base, "POST", `/api/v1/actions/${done.body.action_uuid}/notarize`, { token: owner.key, body: {} })
      await call(base, "POST", "/api/v1/webhooks", { token: owner.key, body: { url: "https://hooks.example.com/x" } })
      await call(base, "POST", "/api/v1/endpoint-whitelist", { token: owner.key, body: { url_pattern: "https://api.example.com/*", name: "api" } })
      await call(base, "POST", "/api/v1/dora/incidents", { token: owner.key, body: { title: "outage", description: "d", detected_at: new Date().toISOString() } })
      await call(base, "POST", "/api/v1/dora/third-parties", {
        token: owner.key,
        body: { vendor_name: "v", service_description: "d", service_type: "saas", criticality: "supporting" }
      })
      await call(base, "POST", "/api/v1/dora/tests", {
        token: owner.key,
        body: { test_type: "other", title: "t", scope: "s", conducted_at: "2026-01-01", conducted_by: "me", status: "passed" }
      })
      const period = { period_start: new Date(Date.now() - 3_600_000).toISOString(), period_end: new Date(Date.now() + 3_600_000).toISOString() }
      const report = await call(base, "POST", "/api/v1/compliance/reports", { token: owner.key, body: { framework: "eu_ai_act_art9", ...period } })
      expect(report.body.status).toBe("ready")
    }
    const pending = await call(base, "POST", "/api/v1/actions", { token: org.key, body: { action_type: "p", details: "d", require_approval: true } })
    await inbox.grant(pending.body.action_uuid, org.email)
    await call(base, "POST", "/api/v1/notifications/mark-all-read", { token: member.token })
    const receipt = await call(base, "GET", `/api/v1/verify/action/${pending.body.action_uuid}`)
    expect(receipt.status).toBe(404)
    const denied = await call(base, "GET", "/api/v1/actions?status=denied_by_policy", { token: org.key })
    const deniedId = denied.body.data[0].action_uuid as string
    expect((await call(base, "GET", `/api/v1/verify/action/${deniedId}`)).status).toBe(200)

    const before = await rowsPerTable(org.orgUuid)
    for (const table of ["actions", "receipts", "events", "policies", "webhooks", "approval_grants", "users", "api_keys", "audit_log", "dora_incidents", "dora_third_parties", "dora_resilience_tests", "compliance_reports", "compliance_report_pdfs", "compliance_art9_observations"]) {
      expect([table, before[table]]).toEqual([table, expect.any(Number)])
      expect(before[table]).toBeGreaterThan(0)
    }
    const survivorBefore = await rowsPerTable(survivor.orgUuid)

    const deleted = await call(base, "DELETE", "/api/v1/auth/account", { token: org.token })
    expect(deleted.status).toBe(200)

    const after = await rowsPerTable(org.orgUuid)
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([])
    expect(await rowsPerTable(survivor.orgUuid)).toEqual(survivorBefore)
    const reads = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM notification_reads WHERE user_uuid = ${member.userUuid}`)
    )
    expect(reads[0]!.n).toBe(0)
    // Its receipts no longer verify; the platform keeps one record that the deletion happened.
    expect((await call(base, "GET", `/api/v1/verify/action/${deniedId}`)).status).toBe(404)
    const platform = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE org_uuid IS NULL AND target = ${org.orgUuid}`)
    )
    expect(platform[0]!.n).toBe(1)
  })
})
