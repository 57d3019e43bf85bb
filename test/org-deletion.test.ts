/**
 * Deleting an account removes the organization and everything it owns (spec:
 * "all its cases, receipts, keys, members and audit logs"). The check is
 * generated from the schema: every table with an `org_uuid` column, so a table
 * added later is covered without touching this test. Over the typed client
 * (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { organizationTables } from "../src/platform/sql.js"
import { client, member, register } from "./support/api.js"
import { liveLayer } from "./support/effect.js"
import { gatewayWithMail, Mailbox } from "./support/mail.js"
import { Gateway } from "./support/server.js"


const Setup = gatewayWithMail()

/** Rows naming `orgUuid` per table, for every base table with an org_uuid column. */
const rowsPerTable = (orgUuid: string) =>
  Effect.flatMap(Gateway, (server) =>
    Effect.promise(() =>
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
    )
  )

/** A count from the server's database. */
const count = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ n: number }>, unknown>) =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(Effect.flatMap(SqlClient.SqlClient, query)))).pipe(Effect.map((rows) => rows[0]!.n))

liveLayer(Setup)((it) => {
  it.describe("deleting an account", () => {
    it.effect("removes every row of the organization in every table, and nothing of another organization", () =>
      Effect.gen(function* () {
        const inbox = yield* Mailbox
        const org = yield* register("Doomed")
        const survivor = yield* register("Survivor")
        yield* (yield* client(org.token)).notificationChannels.put({ payload: { email: { enabled: true } } })
        const teammate = yield* member(org, "member")
        for (const owner of [org, survivor]) {
          const api = yield* client(owner.key)
          yield* api.policies.create({
            payload: { name: "deny x", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "x" }], activate: true }
          })
          // Refused by the policy just made: read as sent.
          yield* api.actions.authorize({ headers: {}, payload: { action_type: "x", details: "denied" }, responseMode: "response-only" })
          const done = yield* api.actions.authorize({ headers: {}, payload: { action_type: "y", details: "d", idempotency_key: "k1" } })
          yield* api.actions.notarize({ params: { action_uuid: done.action_uuid }, payload: {} })
          // Reputation: a snapshot of the organization's agent, and an attestation of its action (written directly: no DID host here).
          const reputed = `reputed-${owner.orgUuid.replace(/[^a-z0-9]/gi, "").slice(-12).toLowerCase()}`
          yield* api.agents.register({ payload: { agent_slug: reputed, name: "Reputed" } })
          const rated = yield* api.actions.authorize({ headers: {}, payload: { action_type: "y", details: "rated", agent_id: reputed } })
          yield* api.actions.notarize({ params: { action_uuid: rated.action_uuid }, payload: {} })
          yield* (yield* client()).reputation.current({ params: { agent_slug: reputed } })
          yield* Effect.flatMap(Gateway, (server) =>
            Effect.promise(() =>
              server.run(
                Effect.flatMap(
                  SqlClient.SqlClient,
                  (sql) => sql`INSERT INTO reputation_attestations (attestation_uuid, org_uuid, agent_slug, action_uuid, counterparty_did, outcome, attested_at,
                      attestation, signature, attestation_hash, verification_method, recorded_at)
                    VALUES (${`att_${rated.action_uuid}`}, ${owner.orgUuid}, ${reputed}, ${rated.action_uuid}, 'did:web:bank.example', 'success', now(),
                      '{}', 'ed25519:x', 'sha256:00', 'did:web:bank.example#key-1', now())`
                )
              )
            )
          )
          yield* api.codeReview.putGithub({ payload: { api_token: "ghp_doomed", repositories: [`owner/${reputed}`] } })
          // A finished review with a violation, and its delivery (written directly: no GitHub here).
          yield* Effect.flatMap(Gateway, (server) =>
            Effect.promise(() =>
              server.run(
                Effect.flatMap(SqlClient.SqlClient, (sql) =>
                  Effect.gen(function* () {
                    const review = `crv_${owner.orgUuid.slice(-12)}`
                    yield* sql`INSERT INTO github_deliveries (org_uuid, delivery_id) VALUES (${owner.orgUuid}, ${`delivery-${review}`})`
                    yield* sql`INSERT INTO code_reviews (review_uuid, org_uuid, repository, repository_key, pull_number, head_sha, base_ref, head_ref, author, status, phase, done)
                               VALUES (${review}, ${owner.orgUuid}, ${`owner/${reputed}`}, ${`owner/${reputed}`}, 1, 'abc1234', 'main', 'f', 'me', 'completed', 'end', true)`
                    yield* sql`INSERT INTO code_review_violations (violation_uuid, review_uuid, position, file, line, finding, category, severity, description, blocks_merge, head_sha)
                               VALUES (${`vio_${review}`}, ${review}, 0, 'a.ts', 1, 'f', 'security', 'critical', 'd', true, 'abc1234')`
                  })
                )
              )
            )
          )
          yield* api.webhooks.create({ payload: { url: "https://hooks.example.com/x" } })
          yield* api.whitelist.add({ payload: { url_pattern: "https://api.example.com/*", name: "api" } })
          yield* api.dora.createIncident({ payload: { title: "outage", description: "d", detected_at: new Date().toISOString() } })
          yield* api.dora.createThirdParty({ payload: { vendor_name: "v", service_description: "d", service_type: "saas", criticality: "supporting" } })
          yield* api.dora.createTest({
            payload: { test_type: "other", title: "t", scope: "s", conducted_at: "2026-01-01", conducted_by: "me", status: "passed" }
          })
          const period = { period_start: new Date(Date.now() - 3_600_000).toISOString(), period_end: new Date(Date.now() + 3_600_000).toISOString() }
          const report = yield* api.compliance.createReport({ payload: { framework: "eu_ai_act_art9", ...period } })
          expect(report.status).toBe("ready")
          yield* api.complianceBundles.create({ headers: {}, payload: { framework: "raw", ...period } })
        }
        const api = yield* client(org.key)
        const anonymous = yield* client()
        const pending = yield* api.actions.authorize({ headers: {}, payload: { action_type: "p", details: "d", require_approval: true } })
        yield* Effect.promise(() => inbox.grant(pending.action_uuid, org.email))
        yield* (yield* client(teammate.token)).notifications.markAllRead({})
        const receipt = yield* anonymous.receiptsPublic.verifyAction({ params: { action_uuid: pending.action_uuid }, responseMode: "response-only" })
        expect(receipt.status).toBe(404)
        const denied = yield* api.actions.list({ query: { status: "denied_by_policy" } })
        const deniedId = denied.data[0]!.action_uuid
        const [, verified] = yield* anonymous.receiptsPublic.verifyAction({ params: { action_uuid: deniedId }, responseMode: "decoded-and-response" })
        expect(verified.status).toBe(200)

        const before = yield* rowsPerTable(org.orgUuid)
        for (const table of ["actions", "receipts", "events", "policies", "webhooks", "approval_grants", "users", "api_keys", "audit_log", "dora_incidents", "dora_third_parties", "dora_resilience_tests", "compliance_reports", "compliance_report_pdfs", "compliance_art9_observations", "reputation_snapshots", "reputation_attestations", "compliance_bundles", "compliance_bundle_leaves", "compliance_bundle_tiles", "usage_events", "github_configs", "github_repositories", "github_deliveries", "code_reviews"]) {
          expect([table, before[table]]).toEqual([table, expect.any(Number)])
          expect(before[table]).toBeGreaterThan(0)
        }
        const survivorBefore = yield* rowsPerTable(survivor.orgUuid)

        const [, deleted] = yield* (yield* client(org.token)).auth.deleteAccount({ responseMode: "decoded-and-response" })
        expect(deleted.status).toBe(200)

        const after = yield* rowsPerTable(org.orgUuid)
        expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([])
        expect(yield* rowsPerTable(survivor.orgUuid)).toEqual(survivorBefore)
        expect(yield* count((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM notification_reads WHERE user_uuid = ${teammate.userUuid}`)).toBe(0)
        // Violations carry no org_uuid: they go with their review.
        expect(yield* count((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM code_review_violations WHERE review_uuid = ${`crv_${org.orgUuid.slice(-12)}`}`)).toBe(0)
        // Its receipts no longer verify; the platform keeps one record that the deletion happened.
        expect((yield* anonymous.receiptsPublic.verifyAction({ params: { action_uuid: deniedId }, responseMode: "response-only" })).status).toBe(404)
        expect(yield* count((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE org_uuid IS NULL AND target = ${org.orgUuid}`)).toBe(1)
      })
    )
  })
})
