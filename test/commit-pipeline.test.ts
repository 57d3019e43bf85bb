/**
 * The commit pipeline (src/actions/commits.ts, src/platform/db/group-commit.ts) against the real
 * database: many agents' work shares commits; a unit that fails, fails alone; and every guard of
 * the batch statement holds — a notarization read before another one committed, a chain head
 * moved by someone else, an agent decommissioned after the read — each sending its group to the
 * locked path, which answers as a locked transaction would and keeps the chain gap-free.
 */
import { expect } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { SqlClient } from "effect/sql"
import type { TransitionRequest } from "../src/actions/agent-messages.js"
import { ActionsError } from "../src/actions/errors.js"
import { AgentMailbox } from "../src/actions/ports.js"
import { makeActionsStore } from "../src/actions/store.js"
import { makeTransitions } from "../src/actions/transitions.js"
import { makeGroupCommit } from "../src/platform/db/group-commit.js"
import { register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { scrape } from "./support/metrics.js"
import { Gateway } from "./support/server.js"

class PipelineOrg extends Context.Service<PipelineOrg, Org>()("test/commit-pipeline/PipelineOrg") {}

const Setup = Layer.effect(PipelineOrg, register("Pipeline Org")).pipe(Layer.provideMerge(Gateway.layer({ METRICS_PORT: "0" })))

/** Runs `effect` with the running server's own services (its database, mailbox, store). */
const onServer = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.flatMap(Gateway, (server) => Effect.promise(() => server.run(effect)))

const http = (method: "GET" | "POST", path: string, body?: unknown) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const org = yield* PipelineOrg
    return yield* Effect.promise(() => call(server.url, method, path, { token: org.key, ...(body === undefined ? {} : { body }) }))
  })

const authorize = (agentId: string, label: string) =>
  Effect.map(http("POST", "/api/v1/actions", { action_type: "tick", details: label, instruction_hash: "sha256:00", agent_id: agentId }), (reply) => {
    expect(reply.status).toBe(201)
    return reply.body.action_uuid as string
  })

const notarize = (actionUuid: string) => http("POST", `/api/v1/actions/${actionUuid}/notarize`, { outcome: "completed" })

/** The agent's receipts as stored, by sequence: 1..n, each linking the one before. */
const expectGapFree = (agentId: string) =>
  Effect.gen(function* () {
    const org = yield* PipelineOrg
    const rows = yield* onServer(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ agent_sequence: string; payload_hash: string; signed_payload: string }>`SELECT agent_sequence, payload_hash, signed_payload FROM receipts
            WHERE org_uuid = ${org.orgUuid} AND agent_id = ${agentId} ORDER BY agent_sequence`
      )
    )
    expect(rows.map((row) => Number(row.agent_sequence))).toEqual(rows.map((_, index) => index + 1))
    rows.forEach((row, index) => {
      expect(JSON.parse(row.signed_payload).previous_payload_hash).toBe(index === 0 ? null : rows[index - 1]!.payload_hash)
    })
    return rows.length
  })

/** A notarization sent straight to the agent's actor with the action as it was read at `read` time. */
const notarizeWithRead = (actionUuid: string, read: Effect.Success<ReturnType<typeof readAction>>) =>
  Effect.gen(function* () {
    const org = yield* PipelineOrg
    const request: TransitionRequest = { _tag: "Notarize", action_uuid: actionUuid, outcome: "completed", outcome_hash: null, output_scan_flags: null, read }
    return yield* onServer(Effect.exit(Effect.flatMap(AgentMailbox, (mailbox) => mailbox.transition(org.orgUuid, read.agent_id, request))))
  })

const readAction = (actionUuid: string) =>
  Effect.gen(function* () {
    const org = yield* PipelineOrg
    const found = yield* onServer(Effect.flatMap(makeActionsStore, (store) => Effect.orDie(store.forTransition(org.orgUuid, actionUuid))))
    return found!
  })

const refusalCode = (exit: Exit.Exit<unknown, unknown>) => {
  if (exit._tag === "Success") return "succeeded"
  const error = Cause.squash(exit.cause)
  return error instanceof ActionsError ? error.reason.code : String(error)
}

const metric = (text: string, pattern: RegExp) => Number(text.match(pattern)?.[1] ?? 0)
const conflicts = Effect.gen(function* () {
  const server = yield* Gateway
  return metric(yield* Effect.promise(() => scrape(server)), /^commit_conflicts_total (\d+)/m)
})

liveLayer(Setup)("commit pipeline", (it) => {
  it.effect(
    "shares commits across agents: 60 agents' authorizations and notarizations commit in batches, every chain gap-free",
    () =>
      Effect.gen(function* () {
        const agents = Array.from({ length: 60 }, (_, index) => `shared-${index}`)
        const ids = yield* Effect.forEach(agents, (agent) => authorize(agent, "one"), { concurrency: "unbounded" })
        const answers = yield* Effect.forEach(ids, notarize, { concurrency: "unbounded" })
        expect(answers.map((reply) => reply.status)).toEqual(ids.map(() => 200))
        for (const agent of agents.slice(0, 5)) expect(yield* expectGapFree(agent)).toBe(1)
        const server = yield* Gateway
        const text = yield* Effect.promise(() => scrape(server))
        // More rows than commits: batches held several requests.
        expect(metric(text, /^commit_batch_rows_sum (\d+)/m)).toBeGreaterThan(metric(text, /^commit_batch_rows_count (\d+)/m))
        // Decisions are counted by outcome, and the policy snapshots were mostly served from the cache.
        expect(metric(text, /^authorize_decisions_total\{outcome="authorized"\} (\d+)/m)).toBeGreaterThanOrEqual(60)
        const lookups = metric(text, /^org_snapshot_cache_lookups_total (\d+)/m)
        expect(lookups).toBeGreaterThanOrEqual(60)
        expect(metric(text, /^org_snapshot_cache_misses_total (\d+)/m)).toBeLessThan(lookups)
      }),
    60_000
  )

  it.effect(
    "a notarization read before its action was notarized is refused 409 by the commit's guard; nothing is minted for it",
    () =>
      Effect.gen(function* () {
        const agent = "stale-read"
        const first = yield* authorize(agent, "first")
        const staleRead = yield* readAction(first)
        expect(staleRead.status).toBe("authorized")
        expect((yield* notarize(first)).status).toBe(200)
        const before = yield* conflicts
        const exit = yield* notarizeWithRead(first, staleRead)
        expect(refusalCode(exit)).toBe("INVALID_ACTION_STATE")
        expect(yield* conflicts).toBeGreaterThan(before)
        // The chain goes on from where it was.
        expect((yield* notarize(yield* authorize(agent, "second"))).status).toBe(200)
        expect(yield* expectGapFree(agent)).toBe(2)
      }),
    60_000
  )

  it.effect(
    "a chain head moved by someone else (another runner) is caught by the guard; the receipt links at the database's head",
    () =>
      Effect.gen(function* () {
        const org = yield* PipelineOrg
        const agent = "moved-head"
        expect((yield* notarize(yield* authorize(agent, "through the actor"))).status).toBe(200)
        // Another runner's transaction advances the chain behind the actor's back.
        const elsewhere = yield* authorize(agent, "elsewhere")
        const read = yield* readAction(elsewhere)
        const other = yield* onServer(
          Effect.flatMap(makeTransitions, (work) =>
            work.run(org.orgUuid, { _tag: "Notarize", action_uuid: elsewhere, outcome: "completed", outcome_hash: null, output_scan_flags: null, read })
          )
        )
        expect(other._tag === "Done" && other.agent_sequence).toBe(2)
        const before = yield* conflicts
        expect((yield* notarize(yield* authorize(agent, "after"))).status).toBe(200)
        expect(yield* conflicts).toBeGreaterThan(before)
        expect((yield* notarize(yield* authorize(agent, "and on"))).status).toBe(200)
        expect(yield* expectGapFree(agent)).toBe(4)
      }),
    60_000
  )

  it.effect(
    "an agent decommissioned after the notarization read it is refused 422 by the guard, with nothing minted",
    () =>
      Effect.gen(function* () {
        const agent = `retiring-${Date.now()}`
        expect((yield* http("POST", "/api/v1/agents", { agent_slug: agent, name: "Retiring" })).status).toBe(201)
        const pending = yield* authorize(agent, "late")
        const read = yield* readAction(pending)
        expect(read.agent_decommissioned).toBe(false)
        expect((yield* http("POST", `/api/v1/agents/${agent}/decommission`, { reason: "replaced" })).status).toBe(200)
        const exit = yield* notarizeWithRead(pending, read)
        expect(refusalCode(exit)).toBe("AGENT_DECOMMISSIONED")
        expect((yield* http("GET", `/api/v1/actions/${pending}`)).body.status).toBe("authorized")
        expect(yield* expectGapFree(agent)).toBe(0)
      }),
    60_000
  )

  it.effect(
    "a unit that fails, fails alone (refused by the database or throwing while its statement is built): the others of its batch commit, and the writer goes on",
    () =>
      Effect.gen(function* () {
        const table = `group_commit_${Date.now()}`
        const outcome = yield* onServer(
          Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            yield* sql.unsafe(`CREATE TABLE ${table} (id integer PRIMARY KEY)`)
            yield* sql.unsafe(`INSERT INTO ${table} VALUES (7)`)
            const scope = yield* Scope.make()
            const pipeline = yield* makeGroupCommit<number, unknown>({
              // 13 cannot even be written down: its statement throws while it is built.
              write: (ids) => {
                if (ids.includes(13)) throw new Error("unlucky")
                return sql`INSERT INTO ${sql(table)} SELECT unnest(${`{${ids.join(",")}}`}::int[])`
              },
              isConflict: () => false,
              sizeOf: () => 1,
              maxUnits: 100,
              maxBytes: 1_000
            }).pipe(Scope.provide(scope))
            // 20 units at once: they queue while the first commits, so most share a batch with 7.
            const exits = yield* Effect.forEach(
              Array.from({ length: 20 }, (_, index) => index + 1),
              (id) => Effect.exit(pipeline.submit(id)),
              { concurrency: "unbounded" }
            )
            // The writer is still there for what comes after.
            const later = yield* Effect.exit(pipeline.submit(21))
            const stored = yield* sql.unsafe<{ id: number }>(`SELECT id FROM ${table} ORDER BY id`)
            yield* sql.unsafe(`DROP TABLE ${table}`)
            yield* Scope.close(scope, Exit.void)
            return {
              failed: exits.flatMap((exit, index) => (exit._tag === "Failure" ? [index + 1] : [])),
              later: later._tag,
              stored: stored.map((row) => row.id)
            }
          })
        )
        expect(outcome.failed).toEqual([7, 13])
        expect(outcome.later).toBe("Success")
        expect(outcome.stored).toEqual([...Array.from({ length: 20 }, (_, index) => index + 1).filter((id) => id !== 13), 21])
      }),
    60_000
  )
})
