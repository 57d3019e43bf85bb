/**
 * The action state table as a property: random sequences of authorize,
 * approve, deny (by code, legacy token or dashboard), notarize and expiry never
 * take an action along an edge the table forbids, every answer agrees with the
 * state it acted on, and every terminal action has exactly one receipt — valid
 * under the portable verifier and linked into its agent's unbroken chain.
 * Over the typed client (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import fc from "fast-check"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { answer, client, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { eventuallyEffect } from "./support/eventually.js"
import { type Grant, Inbox } from "./support/mail.js"
import { Gateway } from "./support/server.js"

const TTL_MS = 1500

class Mailbox extends Context.Service<Mailbox, Inbox>()("test/actions-states/Mailbox") {}
class StatesOrg extends Context.Service<StatesOrg, Org>()("test/actions-states/StatesOrg") {}

const Mail = Layer.effect(
  Mailbox,
  Effect.acquireRelease(
    Effect.promise(() => Inbox.start()),
    (inbox) => Effect.promise(() => inbox.stop())
  )
)
// A short approval lifetime and a fast expiry sweep.
const Server = Layer.unwrap(Effect.map(Mailbox, (inbox) => Gateway.layer({ APPROVAL_TTL_MS: String(TTL_MS), APPROVAL_SWEEP_MS: "100", SMTP_URL: inbox.url })))

const Setup = Layer.effect(
  StatesOrg,
  Effect.gen(function* () {
    const org = yield* register("States Org")
    // The e-mail channel on, so the owner receives approval codes.
    yield* (yield* client(org.token)).notificationChannels.put({ payload: { email: { enabled: true } } })
    const [, policy] = yield* (yield* client(org.key)).policies.create({
      payload: { name: "forbidden", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: "forbidden" }], activate: true },
      responseMode: "decoded-and-response"
    })
    expect(policy.status).toBe(201)
    return org
  })
).pipe(Layer.provideMerge(Server), Layer.provideMerge(Mail))

const TERMINAL = new Set(["notarized", "failed", "denied_by_policy", "denied_by_human"])
const ALLOWED: Record<string, ReadonlyArray<string>> = {
  authorized: ["notarized", "failed"],
  pending_approval: ["approved", "denied_by_human"],
  approved: ["notarized", "failed"],
  notarized: [],
  failed: [],
  denied_by_policy: [],
  denied_by_human: []
}
const RECEIPT_STATUS: Record<string, string> = {
  notarized: "notarized",
  failed: "failed",
  denied_by_policy: "denied",
  denied_by_human: "denied_by_human"
}

type Op =
  | { kind: "authorize"; mode: "plain" | "approval" | "forbidden" }
  | { kind: "approve" | "deny"; target: number; via: "code" | "token" | "dashboard" }
  | { kind: "notarize"; target: number; outcome: "completed" | "failed" }
  | { kind: "wait" }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("authorize" as const), mode: fc.constantFrom("plain" as const, "approval" as const, "forbidden" as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom("approve" as const, "deny" as const), target: fc.nat(20), via: fc.constantFrom("code" as const, "token" as const, "dashboard" as const) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("notarize" as const), target: fc.nat(20), outcome: fc.constantFrom("completed" as const, "failed" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("wait" as const) }) }
)

const agentApi = Effect.flatMap(StatesOrg, (org) => client(org.key))
const ownerApi = Effect.flatMap(StatesOrg, (org) => client(org.token))

const detailOf = (id: string) =>
  Effect.gen(function* () {
    const [detail, reply] = yield* (yield* agentApi).actions.get({ params: { action_uuid: id }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    return detail
  })
const statusOf = (id: string) => Effect.map(detailOf(id), (detail) => detail.status)

/** The receipt as served, on its wire form (the signature covers the payload exactly as sent). */
const wireReceipt = (id: string) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    const reply = yield* Effect.promise(() => call(server.url, "GET", `/api/v1/verify/action/${id}`))
    const signed = typeof reply.body.signed_payload === "string" ? JSON.parse(reply.body.signed_payload) : reply.body.signed_payload
    return { body: reply.body, signed }
  })

/**
 * The owner's grant for an action, from their mailbox. None is mailed when the
 * action was resolved or expired before the announcement went out; then the
 * action must no longer be pending.
 */
const grants = new Map<string, Grant | null>()
const grantOf = (id: string) =>
  Effect.gen(function* () {
    if (!grants.has(id)) {
      const inbox = yield* Mailbox
      const org = yield* StatesOrg
      const grant = yield* Effect.promise(() => inbox.grant(id, org.email).catch(() => null))
      if (grant === null) expect(yield* statusOf(id)).not.toBe("pending_approval")
      grants.set(id, grant)
    }
    return grants.get(id)!
  })

/** The token of a mailed approve or deny link, once the link is seen to name the action and the decision. */
const mailedToken = (link: string, id: string, decision: "approve" | "deny") => {
  const url = new URL(link)
  expect(url.pathname).toBe(`/api/v1/actions/${id}/${decision}`)
  return url.searchParams.get("token")!
}

/** The answer to a decision; undefined: no credential was ever mailed for this action (it stopped pending first). */
const decide = (id: string, kind: "approve" | "deny", via: "code" | "token" | "dashboard") =>
  Effect.gen(function* () {
    const params = { action_uuid: id }
    if (via === "dashboard") {
      const owner = yield* ownerApi
      return yield* answer(
        kind === "approve"
          ? owner.actions.dashboardApprove({ params, responseMode: "response-only" })
          : owner.actions.dashboardDeny({ params, query: {}, responseMode: "response-only" })
      )
    }
    const grant = yield* grantOf(id)
    if (grant === null) return undefined
    const anonymous = yield* client()
    if (via === "code") return yield* answer(anonymous.actionApprovals.confirm({ params: { code: grant.code }, payload: { decision: kind }, responseMode: "response-only" }))
    const query = { token: mailedToken(kind === "approve" ? grant.approve_url : grant.deny_url, id, kind) }
    return yield* answer(
      kind === "approve"
        ? anonymous.actionApprovals.tokenApprove({ params, query, responseMode: "response-only" })
        : anonymous.actionApprovals.tokenDeny({ params, query, responseMode: "response-only" })
    )
  })

let run = 0

/** One generated sequence, then the table and receipt checks over what it did. */
const property = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const api = yield* agentApi
    const owner = yield* ownerApi
    const agent = `prop-agent-${++run}`
    const actions: Array<{ id: string; pendingOnce: boolean; history: Array<string> }> = []
    let waited = false
    for (const op of ops) {
      if (op.kind === "authorize") {
        const payload = {
          action_type: op.mode === "forbidden" ? "forbidden" : "task",
          details: `d${actions.length}`,
          agent_id: agent,
          instruction_hash: "sha256:00",
          require_approval: op.mode === "approval"
        }
        if (op.mode === "forbidden") {
          const reply = yield* answer(api.actions.authorize({ headers: {}, payload, responseMode: "response-only" }))
          expect(reply.status).toBe(403)
          expect(reply.body.code).toBe("POLICY_DENIED")
          actions.push({ id: reply.body.details.action_uuid, pendingOnce: false, history: ["denied_by_policy"] })
        } else {
          const [created, reply] = yield* api.actions.authorize({ headers: {}, payload, responseMode: "decoded-and-response" })
          expect(reply.status).toBe(201)
          expect(created.status).toBe(op.mode === "approval" ? "pending_approval" : "authorized")
          actions.push({ id: created.action_uuid, pendingOnce: op.mode === "approval", history: [created.status] })
        }
        continue
      }
      if (op.kind === "wait") {
        // Let pending approvals pass their lifetime (once per run keeps the suite fast): until the expiry sweep
        // has resolved every one still pending (at once when none is).
        if (!waited) {
          yield* eventuallyEffect(
            Effect.gen(function* () {
              for (const action of actions) if (action.pendingOnce && (yield* statusOf(action.id)) === "pending_approval") return false
              return true
            }),
            { timeoutMs: TTL_MS + 10_000, intervalMs: 100 }
          )
        }
        waited = true
        for (const action of actions) action.history.push(yield* statusOf(action.id))
        continue
      }
      if (actions.length === 0) continue
      const action = actions[op.target % actions.length]!
      if (op.kind === "notarize") {
        const reply = yield* answer(api.actions.notarize({ params: { action_uuid: action.id }, payload: { outcome: op.outcome }, responseMode: "response-only" }))
        const after = yield* statusOf(action.id)
        if (reply.status === 200) {
          expect(after).toBe(op.outcome === "completed" ? "notarized" : "failed")
          expect(["authorized", "approved"]).toContain(action.history.at(-1))
        } else {
          expect(reply.status).toBe(409)
          expect(reply.body.code).toBe("INVALID_ACTION_STATE")
          expect(["authorized", "approved"]).not.toContain(after)
        }
        action.history.push(after)
        continue
      }
      if (!action.pendingOnce) {
        // Never pending: no code or token exists; the dashboard answers ALREADY_RESOLVED.
        const params = { action_uuid: action.id }
        const reply = yield* answer(
          op.kind === "approve"
            ? owner.actions.dashboardApprove({ params, responseMode: "response-only" })
            : owner.actions.dashboardDeny({ params, query: {}, responseMode: "response-only" })
        )
        expect(reply.status).toBe(409)
        expect(reply.body.code).toBe("ALREADY_RESOLVED")
        action.history.push(yield* statusOf(action.id))
        continue
      }
      const reply = yield* decide(action.id, op.kind, op.via)
      const after = yield* statusOf(action.id)
      if (reply === undefined) {
        expect(after).not.toBe("pending_approval")
      } else if (reply.status === 200) {
        expect(reply.body.status).toBe(op.kind === "approve" ? "approved" : "denied_by_human")
        expect(after).toBe(reply.body.status)
      } else {
        expect(op.via === "code" ? [409, 410] : op.via === "token" ? [409, 410] : [409]).toContain(reply.status)
        expect(after).not.toBe("pending_approval")
      }
      action.history.push(after)
    }

    // Every observed step follows the table (or stays put).
    for (const action of actions) {
      for (let i = 1; i < action.history.length; i++) {
        const [from, to] = [action.history[i - 1]!, action.history[i]!]
        if (from !== to) expect([from, ALLOWED[from]]).toEqual([from, expect.arrayContaining([to])])
      }
    }

    // Terminal ⇔ one receipt; the receipts of the agent form an unbroken chain. A sentinel receipt
    // closes the chain first, and the actions are read after it: a pending approval may expire at
    // any moment on a loaded machine, but one that expired before the sentinel is terminal by the
    // time it is read, so every receipt up to the sentinel's sequence is seen (an extra, unseen
    // receipt would break the links or the count).
    const sentinel = yield* api.actions.authorize({ headers: {}, payload: { action_type: "task", details: "sentinel", agent_id: agent, instruction_hash: "sha256:00" } })
    yield* api.actions.notarize({ params: { action_uuid: sentinel.action_uuid }, payload: {}, responseMode: "response-only" })
    const last = yield* wireReceipt(sentinel.action_uuid)
    const seen: Array<{ sequence: number; previous: string | null; hash: string }> = [
      { sequence: last.signed.agent_sequence, previous: last.signed.previous_payload_hash, hash: last.body.payload_hash }
    ]
    for (const action of actions) {
      const detail = yield* detailOf(action.id)
      if (!TERMINAL.has(detail.status)) {
        expect(detail.receipt).toBeNull()
        continue
      }
      expect(detail.receipt).not.toBeNull()
      const verify = yield* wireReceipt(action.id)
      const check = verifyReceipt({
        signed_payload: verify.signed,
        payload_hash: verify.body.payload_hash,
        signature: verify.body.signature,
        public_key: verify.body.public_key
      })
      expect(check.errors).toEqual([])
      expect(verify.signed.receipt_status).toBe(RECEIPT_STATUS[detail.status])
      expect(verify.body.receipt_uuid).toBe(detail.receipt!.receipt_uuid)
      seen.push({ sequence: verify.signed.agent_sequence, previous: verify.signed.previous_payload_hash, hash: verify.body.payload_hash })
    }
    // Receipts made after the sentinel (expiries while the actions were read) are past its sequence.
    const receipts = seen.filter((r) => r.sequence <= last.signed.agent_sequence).sort((a, b) => a.sequence - b.sequence)
    expect(receipts.map((r) => r.sequence)).toEqual(receipts.map((_, i) => i + 1))
    for (let i = 0; i < receipts.length; i++) expect(receipts[i]!.previous).toBe(i === 0 ? null : receipts[i - 1]!.hash)
  })

liveLayer(Setup)((it) => {
  it.describe("action state table", () => {
    it.effect(
      "never takes a forbidden edge, and every terminal action has exactly one valid chained receipt",
      () =>
        Effect.gen(function* () {
          // fast-check drives the runs (its weighted op generator and shrinking); each run is an Effect on this suite's services.
          const runWith = Effect.runPromiseWith(yield* Effect.context<Gateway | StatesOrg | Mailbox>())
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 12 }), (ops) => runWith(property(ops))),
              { numRuns: 12 }
            )
          )
        }),
      300_000
    )
  })

  it.describe("expiry of pending approvals", () => {
    it.effect(
      "turns an unanswered approval into denied_by_human (expired) with a receipt, and retires its code",
      () =>
        Effect.gen(function* () {
          const org = yield* StatesOrg
          const inbox = yield* Mailbox
          const [created, createdReply] = yield* (yield* agentApi).actions.authorize({
            headers: {},
            payload: { action_type: "task", details: "waits forever", agent_id: "expiry-agent", require_approval: true },
            responseMode: "decoded-and-response"
          })
          expect(createdReply.status).toBe(201)
          const id = created.action_uuid
          const grant = yield* Effect.promise(() => inbox.grant(id, org.email))
          const pending = yield* detailOf(id)
          expect(Date.parse(pending.approval_expires_at!) - Date.parse(created.created_at)).toBeLessThanOrEqual(TTL_MS + 50)
          const detail = yield* eventuallyEffect(
            Effect.map(detailOf(id), (detail) => detail.status !== "pending_approval" && detail),
            { timeoutMs: 10_000, intervalMs: 100 }
          )
          expect(detail.status).toBe("denied_by_human")
          expect(detail.denial_reason).toBe("expired")
          expect(detail.receipt).not.toBeNull()
          const { signed } = yield* wireReceipt(id)
          expect(signed.receipt_status).toBe("denied_by_human")
          expect(signed.approval).toEqual(expect.objectContaining({ decision: "denied", via: "expiry", reason: "expired" }))
          const late = yield* answer((yield* client()).actionApprovals.confirm({ params: { code: grant.code }, payload: { decision: "approve" }, responseMode: "response-only" }))
          expect(late.status).toBe(410)
          expect(late.body.code).toBe("CODE_EXPIRED")
        }),
      30_000
    )
  })
})
