/**
 * Two gateway processes in CLUSTER_MODE=sql sharing one Postgres: the agents'
 * actors are sharded across both, and 200 authorize+notarize pairs for one
 * agent, split across the two, still give agent_sequence 1..200 with no gap,
 * each receipt linking to the previous one.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { spawnServer } from "./support/process.js"
import { freePort } from "./support/server.js"

/** Runner addresses registered in the cluster's runner table of `url`. */
const registeredRunners = (url: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT address FROM cluster_runners`
      return rows.map((row: any) => String(row.address)).sort()
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )

/** Fails instead of hanging, so the servers are always stopped. */
const within = <T>(promise: Promise<T>, what: string, ms = 30_000): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref())])

describe("two gateway processes in CLUSTER_MODE=sql", () => {
  it("keep one agent's chain gap-free and linked when its requests are split across both", async () => {
    const database = await freshDatabaseUrl()
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL ?? "",
      MASTER_KEY: "2222222222222222222222222222222222222222222222222222222222222222",
      RATE_LIMIT_PER_MINUTE: "100000",
      PUBLIC_RATE_LIMIT_PER_MINUTE: "100000",
      CLUSTER_MODE: "sql",
      RUNNER_HOST: "127.0.0.1",
      DATA_DIR: `/tmp/gw-cluster-${process.pid}`
    }
    const ports = [await freePort(), await freePort()]
    const first = await spawnServer({ ...env, RUNNER_PORT: String(ports[0]) })
    const second = await spawnServer({ ...env, RUNNER_PORT: String(ports[1]) })
    const servers = [first, second]
    try {
      const org = await registerOrg(first.url)
      const runOne = async (index: number) => {
        const base = servers[index % 2]!.url
        const created = await within(call(base, "POST", "/api/v1/actions", {
          token: org.key,
          body: { action_type: "tick", details: `step ${index}`, agent_id: "shared-agent", instruction_hash: "sha256:00" }
        }), `authorize ${index}`)
        expect(created.status, created.text).toBe(201)
        // Notarize through the other process than the one that authorized.
        const done = await within(
          call(servers[(index + 1) % 2]!.url, "POST", `/api/v1/actions/${created.body.action_uuid}/notarize`, { token: org.key, body: { outcome: "completed" } }),
          `notarize ${index}`
        )
        expect(done.status, done.text).toBe(200)
        return created.body.action_uuid as string
      }
      const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => runOne(i)))
      expect(new Set(ids).size).toBe(200)
      const receipts = await Promise.all(
        ids.map(async (id, i) => {
          const reply = await call(servers[i % 2]!.url, "GET", `/api/v1/verify/action/${id}`)
          expect(reply.status, reply.text).toBe(200)
          const payload = typeof reply.body.signed_payload === "string" ? JSON.parse(reply.body.signed_payload) : reply.body.signed_payload
          return { payloadHash: reply.body.payload_hash as string, sequence: payload.agent_sequence as number, previous: payload.previous_payload_hash as string | null }
        })
      )
      receipts.sort((a, b) => a.sequence - b.sequence)
      expect(receipts.map((r) => r.sequence)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
      expect(receipts[0]!.previous).toBeNull()
      for (let i = 1; i < receipts.length; i++) expect(receipts[i]!.previous).toBe(receipts[i - 1]!.payloadHash)

      // Both processes joined the SQL-backed sharding as runners at their RUNNER_HOST:RUNNER_PORT.
      const runners = await registeredRunners(database.url)
      expect(runners.length).toBe(2)
      for (const port of ports) expect(runners.some((address) => address.includes(String(port)))).toBe(true)
    } catch (error) {
      console.log(`first server:\n${first.output().slice(-3000)}\nsecond server:\n${second.output().slice(-3000)}`)
      throw error
    } finally {
      await first.stop()
      await second.stop()
      await database.drop()
    }
  }, 150_000)
})
