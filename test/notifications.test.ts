/**
 * `/api/v1/notifications/*` end to end: pending approvals as items, newest
 * first; read state per dashboard user; API keys see everything unread and
 * mark nothing; organizations never see each other's items.
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { answer, client, member, register } from "./support/api.js"
import { call, type Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Fixture extends Context.Service<Fixture, { readonly org: Org; readonly other: Org; readonly pendingIds: ReadonlyArray<string> }>()(
  "test/notifications/Fixture"
) {}

const requestApproval = (target: Org, actionType: string, agentId?: string) =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(target.key)).actions.authorize({
      headers: {},
      payload: { action_type: actionType, details: `details of ${actionType}`, require_approval: true, ...(agentId ? { agent_id: agentId } : {}) },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    expect(created.status).toBe("pending_approval")
    return created.action_uuid
  })

const Setup = Layer.effect(
  Fixture,
  Effect.gen(function* () {
    const org = yield* register("Notified")
    const other = yield* register("Elsewhere")
    const pendingIds: Array<string> = []
    for (const type of ["payments.send", "email.send", "files.delete"]) {
      pendingIds.push(yield* requestApproval(org, type, "agent-007"))
      // Distinct creation times make the expected order unambiguous.
      yield* Effect.sleep(5)
    }
    yield* requestApproval(other, "other.thing")
    return { org, other, pendingIds }
  })
).pipe(Layer.provideMerge(Gateway.layer()))

/** The raw answer of a mark-read with `body`: the contract's schema would refuse the invalid ones before sending. */
const markReadRaw = (token: string, body: unknown) => Effect.flatMap(Gateway, (server) => Effect.promise(() => call(server.url, "POST", "/api/v1/notifications/mark-read", { token, body })))

liveLayer(Setup)((it) => {
  it.describe("GET /api/v1/notifications/pending", () => {
    it.effect("lists pending approvals newest first with the item fields", () =>
      Effect.gen(function* () {
        const { org, pendingIds } = yield* Fixture
        // The body as sent (exact item shape, request_id): read without decoding.
        const reply = yield* answer((yield* client(org.token)).notifications.pending({ responseMode: "response-only" }))
        expect(reply.status).toBe(200)
        expect(reply.body.total).toBe(3)
        expect(reply.body.unread_count).toBe(3)
        expect(reply.body.items.map((item: any) => item.id)).toEqual([...pendingIds].reverse())
        const first = reply.body.items[0]
        expect(first).toEqual({
          id: pendingIds[2],
          type: "action_approval",
          notification_key: `action:${pendingIds[2]}`,
          title: expect.stringContaining("files.delete"),
          description: expect.stringContaining("agent-007"),
          href: `/dashboard/actions/${pendingIds[2]}`,
          created_at: expect.any(String),
          read: false
        })
        const times = reply.body.items.map((item: any) => Date.parse(item.created_at))
        expect([...times].sort((a, b) => b - a)).toEqual(times)
        expect(typeof reply.body.request_id).toBe("string")
      })
    )

    it.effect("shows another organization only its own items", () =>
      Effect.gen(function* () {
        const { other, pendingIds } = yield* Fixture
        const reply = yield* (yield* client(other.key)).notifications.pending({})
        expect(reply.total).toBe(1)
        expect(reply.items[0]!.title).toContain("other.thing")
        expect(reply.items.some((item) => pendingIds.includes(item.id))).toBe(false)
      })
    )

    it.effect("requires credentials", () =>
      Effect.gen(function* () {
        expect((yield* (yield* client()).notifications.pending({ responseMode: "response-only" })).status).toBe(401)
      })
    )
  })

  it.describe("read state", () => {
    it.effect("marks items read for the JWT user only and counts newly read items", () =>
      Effect.gen(function* () {
        const { org, pendingIds } = yield* Fixture
        const dashboard = yield* client(org.token)
        const teammate = yield* client((yield* member(org, "admin")).token)
        const key = `action:${pendingIds[0]}`
        const [first, firstReply] = yield* dashboard.notifications.markRead({ payload: { notification_keys: [key, key] }, responseMode: "decoded-and-response" })
        expect(firstReply.status).toBe(200)
        expect(first.marked).toBe(1)
        const again = yield* dashboard.notifications.markRead({ payload: { notification_keys: [key] } })
        expect(again.marked).toBe(0)

        const mine = yield* dashboard.notifications.pending({})
        expect(mine.unread_count).toBe(2)
        expect(mine.items.find((item) => item.notification_key === key)!.read).toBe(true)

        const theirs = yield* teammate.notifications.pending({})
        expect(theirs.unread_count).toBe(3)
        expect(theirs.items.every((item) => item.read === false)).toBe(true)
      })
    )

    it.effect("gives API-key callers read false everywhere and marks nothing", () =>
      Effect.gen(function* () {
        const { org, pendingIds } = yield* Fixture
        const agent = yield* client(org.key)
        const listed = yield* agent.notifications.pending({})
        expect(listed.unread_count).toBe(3)
        expect(listed.items.every((item) => item.read === false)).toBe(true)
        const [marked, markedReply] = yield* agent.notifications.markRead({
          payload: { notification_keys: [`action:${pendingIds[1]}`] },
          responseMode: "decoded-and-response"
        })
        expect(markedReply.status).toBe(200)
        expect(marked.marked).toBe(0)
        expect((yield* agent.notifications.markAllRead({})).marked).toBe(0)
      })
    )

    it.effect("does not mark keys the organization has no pending item for", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Fixture
        const dashboard = yield* client(org.token)
        const reply = yield* dashboard.notifications.markRead({
          payload: { notification_keys: ["action:act_does_not_exist", `action:${(yield* register()).orgUuid}`] }
        })
        expect(reply.marked).toBe(0)
        const foreign = yield* (yield* client(other.key)).notifications.pending({})
        const foreignKey = foreign.items[0]!.notification_key
        expect((yield* dashboard.notifications.markRead({ payload: { notification_keys: [foreignKey] } })).marked).toBe(0)
      })
    )

    it.effect("validates notification_keys: 1 to 100 strings", () =>
      Effect.gen(function* () {
        const { org } = yield* Fixture
        expect((yield* markReadRaw(org.token, { notification_keys: [] })).status).toBe(422)
        const tooMany = Array.from({ length: 101 }, (_, i) => `action:${i}`)
        expect((yield* markReadRaw(org.token, { notification_keys: tooMany })).status).toBe(422)
        expect((yield* markReadRaw(org.token, {})).status).toBe(422)
      })
    )

    it.effect("mark-all-read marks the rest and then nothing", () =>
      Effect.gen(function* () {
        const { org } = yield* Fixture
        const dashboard = yield* client(org.token)
        const [all, allReply] = yield* dashboard.notifications.markAllRead({ responseMode: "decoded-and-response" })
        expect(allReply.status).toBe(200)
        expect(all.marked).toBe(2)
        expect((yield* dashboard.notifications.markAllRead({})).marked).toBe(0)
        const listed = yield* dashboard.notifications.pending({})
        expect(listed.unread_count).toBe(0)
        expect(listed.total).toBe(3)
      })
    )
  })
})
