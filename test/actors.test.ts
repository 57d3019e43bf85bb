import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { agentActorLayer, agentEntityId, agentMailboxLayer, localAgentMailboxLayer, parseAgentEntityId } from "../actors/agent.js"
import { memoryRunner } from "../actors/runner.js"
import type { ChainHead, TransitionRequest, TransitionResult } from "../src/actions/agent-messages.js"
import { ActionsError, InvalidActionState } from "../src/actions/errors.js"
import { AgentMailbox, AgentWork } from "../src/actions/ports.js"
import { eventuallyEffect } from "./support/eventually.js"

/** A stand-in for the database: chain heads per entity id, and a log of the work as it ran. */
const fakeWork = (delayMs = 1) => {
  const heads = new Map<string, ChainHead>()
  const running = new Map<string, number>()
  let maxPerAgent = 0
  let maxOverall = 0
  let overall = 0
  const order: Array<string> = []
  const headLoads: Array<string> = []
  const batches: Array<number> = []
  const layer = Layer.succeed(AgentWork)(
    AgentWork.of({
      // Links from the head the entity hands over, as the real work does, and reports the head after the group.
      runGroup: (orgUuid, _agentId, head, requests) =>
        Effect.gen(function* () {
          batches.push(requests.length)
          let current = head
          const exits: Array<Exit.Exit<TransitionResult, ActionsError>> = []
          for (const request of requests) {
            const exit = yield* Effect.exit(runOne(orgUuid, request, current))
            if (exit._tag === "Success" && exit.value._tag === "Done") {
              current = { agent_sequence: exit.value.agent_sequence, previous_payload_hash: exit.value.receipt.payload_hash }
            }
            exits.push(exit)
          }
          return { exits, head: current }
        }),
      run: (orgUuid, request) => runOne(orgUuid, request),
      head: (orgUuid, agentId) =>
        Effect.sync(() => {
          headLoads.push(`${orgUuid}:${agentId}`)
          return heads.get(`${orgUuid}:${agentId}`) ?? { agent_sequence: 0, previous_payload_hash: null }
        }),
    })
  )
  function runOne(orgUuid: string, request: TransitionRequest, given?: ChainHead) {
        return Effect.gen(function* () {
          if (request._tag !== "Notarize") return yield* Effect.fail(new ActionsError({ reason: InvalidActionState.of("unexpected") }))
          const [agentId, label] = request.action_uuid.split("/") as [string, string]
          const key = `${orgUuid}:${agentId}`
          running.set(key, (running.get(key) ?? 0) + 1)
          overall++
          maxPerAgent = Math.max(maxPerAgent, running.get(key)!)
          maxOverall = Math.max(maxOverall, overall)
          const head = given ?? heads.get(key) ?? { agent_sequence: 0, previous_payload_hash: null }
          yield* Effect.sleep(delayMs)
          const sequence = head.agent_sequence + 1
          const hash = `h-${key}-${sequence}`
          heads.set(key, { agent_sequence: sequence, previous_payload_hash: hash })
          order.push(label)
          running.set(key, running.get(key)! - 1)
          overall--
          return {
            _tag: "Done",
            action: { org_uuid: orgUuid, action_uuid: request.action_uuid, action_type: "t", agent_id: agentId, created_at: "" },
            receipt: {
              receipt_uuid: `r-${sequence}`,
              payload_hash: hash,
              signature: "",
              public_key_id: "",
              timestamp_token: null,
              receipt_version: "1",
              verify_url: "",
              created_at: "",
              signed_payload: head.previous_payload_hash ?? ""
            },
            agent_sequence: sequence
          } satisfies TransitionResult
        })
  }
  return {
    batches,
    layer,
    heads,
    order,
    headLoads,
    stats: () => ({ maxPerAgent, maxOverall })
  }
}

const actors = (work: ReturnType<typeof fakeWork>, options: { maxResidentEntities?: number; maxIdleMs?: number } = {}) =>
  Layer.mergeAll(agentActorLayer({ maxIdleMs: options.maxIdleMs ?? 60_000 }), agentMailboxLayer).pipe(
    Layer.provide(work.layer),
    Layer.provide(memoryRunner({ maxResidentEntities: options.maxResidentEntities ?? 100_000, entityMaxIdleMs: options.maxIdleMs ?? 60_000 }))
  )

const notarize = (agent: string, label: string) => ({
  _tag: "Notarize" as const,
  action_uuid: `${agent}/${label}`,
  outcome: "completed" as const,
  outcome_hash: null,
  output_scan_flags: null,
  read: {
    action_uuid: `${agent}/${label}`,
    org_uuid: "org",
    agent_id: agent,
    agent_version: null,
    action_type: "t",
    action_details_hash: "sha256:00",
    instruction_hash: null,
    details_sealed: null,
    details_storage_key: null,
    model_id: null,
    model_version: null,
    parent_action_uuid: null,
    endpoint_url: null,
    status: "authorized",
    policy_uuid: null,
    approved_by: null,
    approved_at: null,
    approval_via: null,
    created_at: "",
    parent_payload_hash: null,
    agent_decommissioned: false
  }
})

const localActors = (work: ReturnType<typeof fakeWork>, options: { maxIdleMs?: number } = {}) =>
  localAgentMailboxLayer({ maxIdleMs: options.maxIdleMs ?? 60_000 }).pipe(Layer.provide(work.layer))

/**
 * Effect's Clock running ten times faster than real time: a TestClock moved on by 50 ms every 5 ms. The cluster
 * keeps all its time (reaper, shard locks, polls) on Effect's Clock, so it sees time pass consistently, only faster.
 */
const fastClock = Layer.effectDiscard(
  Effect.forkScoped(Effect.forever(Effect.andThen(TestClock.adjust("50 millis"), Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5))))))
).pipe(Layer.provideMerge(TestClock.layer()))

const run = <A, E>(effect: Effect.Effect<A, E, AgentMailbox>, layer: Layer.Layer<AgentMailbox>) => Effect.runPromise(Effect.scoped(Effect.provide(effect, layer)))

describe("AgentActor", () => {
  it("names entities org:agent, with one default agent for actions without agent_id", () => {
    expect(agentEntityId("org-1", "bot:7")).toBe("org-1:bot:7")
    expect(agentEntityId("org-1", null)).toBe("org-1:_default")
    expect(parseAgentEntityId("org-1:bot:7")).toEqual({ orgUuid: "org-1", agentId: "bot:7" })
  })


  it("serves more than 10,000 distinct agents (maxResidentEntities is set, not the library default)", async () => {
    const work = fakeWork(0)
    const agents = 10_050
    const results = await run(
      Effect.gen(function* () {
        const mailbox = yield* AgentMailbox
        return yield* Effect.forEach(
          Array.from({ length: agents }, (_, i) => `agent-${i}`),
          (agent) => mailbox.transition("org", agent, notarize(agent, "only")),
          { concurrency: 256 }
        )
      }),
      actors(work)
    )
    expect(results.length).toBe(agents)
    expect(results.every((r) => r._tag === "Done" && r.agent_sequence === 1)).toBe(true)
  }, 120_000)

  it("refuses a new agent beyond maxResidentEntities (why the limit is configured)", async () => {
    const work = fakeWork(0)
    const exit = await run(
      Effect.exit(
        Effect.gen(function* () {
          const mailbox = yield* AgentMailbox
          for (let i = 0; i < 4; i++) yield* mailbox.transition("org", `agent-${i}`, notarize(`agent-${i}`, "only"))
        })
      ),
      actors(work, { maxResidentEntities: 3 })
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(exit)).toContain("MailboxFull")
  })
})


/** What both ways of holding an agent's worker must do: the cluster entity and the in-process map. */
const behaviours = (make: (work: ReturnType<typeof fakeWork>, options?: { maxIdleMs?: number }) => Layer.Layer<AgentMailbox>) => () => {
    it("runs one agent's transitions one at a time, in a gapless chain, while other agents run alongside", async () => {
      const work = fakeWork(2)
      const results = await run(
        Effect.gen(function* () {
          const mailbox = yield* AgentMailbox
          const jobs = []
          for (let i = 0; i < 100; i++) {
            jobs.push(mailbox.transition("org", "a", notarize("a", `a${i}`)))
            jobs.push(mailbox.transition("org", "b", notarize("b", `b${i}`)))
          }
          const all = yield* Effect.all(jobs, { concurrency: "unbounded" })
          return { all, head: yield* mailbox.head("org", "a") }
        }),
        make(work)
      )
      expect(work.stats().maxPerAgent).toBe(1)
      expect(work.stats().maxOverall).toBe(2)
      const chainA = results.all.filter((r): r is Extract<TransitionResult, { _tag: "Done" }> => r._tag === "Done" && r.action.agent_id === "a")
      const sequences = chainA.map((r) => r.agent_sequence).sort((x, y) => x - y)
      expect(sequences).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
      // Each receipt commits to the previous one's hash (the fake puts it in signed_payload).
      const bySequence = new Map(chainA.map((r) => [r.agent_sequence, r] as const))
      for (let s = 2; s <= 100; s++) {
        const r = bySequence.get(s)!
        const prev = bySequence.get(s - 1)!
        expect(r.receipt.signed_payload).toBe(prev.receipt.payload_hash)
      }
      expect(results.head).toEqual({ agent_sequence: 100, previous_payload_hash: "h-org:a-100" })
    })

    it("commits queued transitions of one agent in batches, in arrival order, answering each", async () => {
      const work = fakeWork(3)
      const results = await run(
        Effect.gen(function* () {
          const mailbox = yield* AgentMailbox
          return yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) => mailbox.transition("org", "a", notarize("a", `a${i}`)), {
            concurrency: "unbounded"
          })
        }),
        make(work)
      )
      expect(Math.max(...work.batches)).toBeGreaterThan(1)
      expect(work.batches.reduce((sum, size) => sum + size, 0)).toBe(50)
      // Each caller gets its own request's receipt, and sequences follow the order the batch ran in.
      expect(results.map((r) => r._tag === "Done" && r.action.action_uuid)).toEqual(Array.from({ length: 50 }, (_, i) => `a/a${i}`))
      const sequenceOf = new Map(results.map((r) => [r._tag === "Done" ? r.action.action_uuid : "", r._tag === "Done" ? r.agent_sequence : 0]))
      expect(work.order.map((label) => sequenceOf.get(`a/${label}`))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    })

    it("passes refusals through as typed failures", async () => {
      const work = fakeWork()
      const exit = await run(Effect.exit(Effect.gen(function* () { return yield* (yield* AgentMailbox).transition("org", "a", { _tag: "Expire", action_uuid: "x", at: "" }) })), make(work))
      const failure = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
      expect(failure !== undefined && Option.isSome(failure) && failure.value instanceof ActionsError && failure.value.reason.code).toBe("INVALID_ACTION_STATE")
    })

    it("loads its chain head from storage when it starts, and again after passivation", async () => {
      // No delay in the work: it runs on the TestClock below, where a sleep waits for the clock to move.
      const work = fakeWork(0)
      work.heads.set("org:a", { agent_sequence: 41, previous_payload_hash: "h-41" })
      const seen = await run(
        Effect.gen(function* () {
          const mailbox = yield* AgentMailbox
          const first = yield* mailbox.head("org", "a")
          const done = yield* mailbox.transition("org", "a", notarize("a", "x"))
          // Someone else (another runner, before a shard move) advanced the chain while this entity sat idle.
          work.heads.set("org:a", { agent_sequence: 50, previous_payload_hash: "h-50" })
          // Until it is passivated the entity answers the head it holds (42). The cluster's reaper looks for idle
          // entities every 5 s of Effect's Clock at the finest (0.5 s of real time on the fast clock); the in-process
          // workers measure idleness with Date.now, so the polls are 150 ms of real time apart (maxIdleMs is 100).
          const reloaded = yield* eventuallyEffect(
            Effect.map(mailbox.head("org", "a"), (head) => head.agent_sequence === 50 && head),
            { intervalMs: 150, timeoutMs: 10_000 }
          )
          return { first, done, reloaded }
        }),
        Layer.provideMerge(make(work, { maxIdleMs: 100 }), fastClock)
      )
      expect(seen.first).toEqual({ agent_sequence: 41, previous_payload_hash: "h-41" })
      expect(seen.done._tag === "Done" && seen.done.agent_sequence).toBe(42)
      expect(seen.reloaded).toEqual({ agent_sequence: 50, previous_payload_hash: "h-50" })
      expect(work.headLoads.filter((id) => id === "org:a").length).toBe(2)
    })
}

describe.each([
  ["as AgentActor entities (several processes)", actors],
  ["as in-process workers (one process)", localActors]
] as const)("agent workers %s", (_, make) => behaviours(make)())
