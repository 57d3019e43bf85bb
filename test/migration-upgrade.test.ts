/**
 * Upgrading a database written by an earlier version: the data it holds is
 * migrated, not only the schema. Each case runs the older migrations, writes
 * what that version wrote, then runs them all.
 */
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { databaseClientLayer, runMigrations, runMigrationsOf } from "../src/platform/db/index.js"
import { migrations } from "../src/platform/db/migrations/index.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"

let database: FreshDatabase | undefined
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)

/** The migrations up to and including `last`. */
const upTo = (last: string) => Object.fromEntries(Object.entries(migrations).filter(([key]) => key <= last))

beforeAll(async () => {
  database = await freshDatabaseUrl()
  runtime = ManagedRuntime.make(databaseClientLayer({ url: database.url, dataDir: UNUSED_DATA_DIR, maxConnections: 2 }))
})

afterAll(async () => {
  await runtime?.dispose()
  await database?.drop()
})

describe("0008 approval grants", () => {
  it("scrubs approval secrets from stored events and deliveries, retires old codes, and drops rows of deleted organizations", async () => {
    await run(runMigrationsOf(upTo("0007_notifications")))
    await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO organizations (org_uuid, name, slug) VALUES ('org-live', 'Live', 'live')`
        yield* sql`INSERT INTO users (user_uuid, org_uuid, email, password_hash, role) VALUES ('user-live', 'org-live', 'o@x.test', 'x', 'owner')`
        const secretData = {
          action_uuid: "act_1",
          action_type: "pay",
          agent_id: null,
          approval_url: "http://gw/approve/K7Q2M9XDAB",
          approval_code: "K7Q2M9XDAB",
          expires_at: "2026-01-01T00:00:00.000Z",
          approve_url: "http://gw/api/v1/actions/act_1/approve?token=1.mac",
          deny_url: "http://gw/api/v1/actions/act_1/deny?token=1.mac"
        }
        yield* sql`INSERT INTO actions (action_uuid, org_uuid, action_type, action_details_hash, status, approval_code_hash)
                   VALUES ('act_1', 'org-live', 'pay', 'sha256:00', 'pending_approval', 'unkeyed-digest')`
        yield* sql`INSERT INTO events (event_id, org_uuid, type, data) VALUES ('evt_1', 'org-live', 'action.approval_requested', ${JSON.stringify(secretData)}::jsonb)`
        yield* sql`INSERT INTO webhooks (id, org_uuid, url, secret_sealed, events, status, created_at)
                   VALUES ('wh_1', 'org-live', 'https://h.example/x', 'sealed', '["*"]', 'active', now())`
        const payload = { ...secretData, event: "action.approval_requested", delivery_id: "msg_1", timestamp: "t", data: secretData }
        yield* sql`INSERT INTO webhook_deliveries (id, webhook_id, org_uuid, event_id, event, payload, status, next_attempt_at, created_at)
                   VALUES ('msg_1', 'wh_1', 'org-live', 'evt_1', 'action.approval_requested', ${JSON.stringify(payload)}::jsonb, 'delivered', now(), now())`
        // What earlier deletions left behind: rows of an organization that no longer exists.
        yield* sql`INSERT INTO actions (action_uuid, org_uuid, action_type, action_details_hash, status)
                   VALUES ('act_orphan', 'org-gone', 'pay', 'sha256:00', 'authorized')`
        yield* sql`INSERT INTO policies (id, org_uuid, name, mode, decision) VALUES ('pol_orphan', 'org-gone', 'p', 'rules', 'deny')`
        yield* sql`INSERT INTO notification_reads (user_uuid, notification_key) VALUES ('user-gone', 'action:act_orphan')`
      })
    )

    await run(runMigrations)

    const after = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const event = yield* sql<{ data: unknown }>`SELECT data FROM events WHERE event_id = 'evt_1'`
        const delivery = yield* sql<{ payload: unknown }>`SELECT payload FROM webhook_deliveries WHERE id = 'msg_1'`
        const columns = yield* sql<{ column_name: string }>`
          SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'actions'`
        const orphans = yield* sql<{ n: number }>`
          SELECT (SELECT count(*) FROM actions WHERE org_uuid = 'org-gone') + (SELECT count(*) FROM policies WHERE org_uuid = 'org-gone')
               + (SELECT count(*) FROM notification_reads WHERE user_uuid = 'user-gone') AS n`
        const live = yield* sql<{ n: number }>`SELECT count(*) AS n FROM actions WHERE org_uuid = 'org-live'`
        return { event: event[0]!.data, delivery: delivery[0]!.payload, columns: columns.map((row) => row.column_name), orphans: Number(orphans[0]!.n), live: Number(live[0]!.n) }
      })
    )
    const text = JSON.stringify([after.event, after.delivery])
    for (const secret of ["K7Q2M9XDAB", "token=", "/approve/"]) expect(text).not.toContain(secret)
    expect(after.event).toEqual({ action_uuid: "act_1", action_type: "pay", agent_id: null, expires_at: "2026-01-01T00:00:00.000Z" })
    expect((after.delivery as any).data).toEqual(after.event)
    expect((after.delivery as any).delivery_id).toBe("msg_1")
    expect(after.columns).not.toContain("approval_code_hash")
    expect(after.orphans).toBe(0)
    expect(after.live).toBe(1)
  })
})
