/**
 * Analytics SQL on the real database (migrated, so the actions area's table
 * exists); rows are inserted directly because the report logic is what is tested
 * here, not authorize. An empty action_type reports as 'unknown'.
 */
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Analytics } from "../src/analytics/service.js"
import { freshDatabaseLayer } from "./support/database.js"
import { liveLayer } from "./support/effect.js"

liveLayer(Analytics.layer.pipe(Layer.provideMerge(freshDatabaseLayer)))("analytics", (it) => {
  it.effect("answers zeros for model agreement while there is no cases table", () =>
    Effect.gen(function* () {
      const analytics = yield* Analytics
      const sql = yield* SqlClient.SqlClient
      const present = yield* sql`SELECT to_regclass('cases') IS NOT NULL AS present`
      const agreement = yield* analytics.modelAgreement("org-without-cases", 30)
      expect(agreement).toEqual({ total_cases: 0, avg_disagreement: 0, by_decision: { APPROVE: 0, DENY: 0, REVIEW: 0 } })
      expect(typeof present[0]!.present).toBe("boolean")
      expect(yield* analytics.approvalRates("org-without-actions", 30)).toEqual({ approved: 0, denied: 0, review: 0, total: 0 })
    })
  )

  it.effect("aggregates actions per organization and window", () =>
    Effect.gen(function* () {
      const analytics = yield* Analytics
      const sql = yield* SqlClient.SqlClient
      const org = `org-an-${Date.now()}`
      const rows: Array<[string | null, string | null, string, number]> = [
        ["bot-a", "payment", "authorized", 0],
        ["bot-a", "payment", "denied_by_policy", 0],
        ["bot-a", "payment", "denied_by_policy", 1],
        ["bot-b", "email", "notarized", 2],
        ["bot-b", null, "denied_by_policy", 3],
        [null, "email", "pending_approval", 3],
        ["bot-c", "payment", "denied_by_human", 10],
        ["bot-a", "payment", "authorized", 100]
      ]
      let n = 0
      const insert = (orgUuid: string, agent: string | null, type: string | null, status: string, daysAgo: number) =>
        sql`INSERT INTO actions (action_uuid, org_uuid, agent_id, action_type, action_details_hash, status, created_at)
                 VALUES (${`act_an_${Date.now()}_${++n}`}, ${orgUuid}, ${agent}, ${type ?? ""}, 'sha256:00', ${status},
                         ${new Date(Date.now() - daysAgo * 86_400_000 - 1000)})`
      for (const [agent, type, status, daysAgo] of rows) yield* insert(org, agent, type, status, daysAgo)
      yield* insert("someone-else", "bot-a", "payment", "authorized", 0)

      expect(yield* analytics.approvalRates(org, 30)).toEqual({ approved: 2, denied: 4, review: 1, total: 7 })
      expect(yield* analytics.approvalRates(org, 365)).toMatchObject({ total: 8 })
      expect(yield* analytics.topAgents(org, 30, 10)).toEqual({
        data: [
          { agent_id: "bot-a", action_count: 3 },
          { agent_id: "bot-b", action_count: 2 },
          { agent_id: "bot-c", action_count: 1 }
        ]
      })
      expect((yield* analytics.topAgents(org, 30, 1)).data).toHaveLength(1)
      expect(yield* analytics.policyDenials(org, 30)).toEqual({
        data: [
          { action_type: "payment", total: 4, denied: 2 },
          { action_type: "unknown", total: 1, denied: 1 }
        ]
      })
      const daily = yield* analytics.actionsOverTime(org, 30, "daily")
      expect(daily.data.reduce((sum, point) => sum + point.count, 0)).toBe(7)
      expect(daily.data.every((point) => /^\d{4}-\d{2}-\d{2}$/.test(point.date))).toBe(true)
      const weekly = yield* analytics.actionsOverTime(org, 30, "weekly")
      expect(weekly.data.length).toBeLessThanOrEqual(daily.data.length)
      expect(weekly.data.reduce((sum, point) => sum + point.count, 0)).toBe(7)
    })
  )
})
