/** Webhook registration and notification-channel settings over the typed client (HttpApiClient over GatewayApi). */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { answer, client, member, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly alice: Org; readonly bob: Org }>()("test/webhooks-api/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ alice: register("Alice Co"), bob: register("Bob Co") })).pipe(
  Layer.provideMerge(Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true" }))
)

liveLayer(Setup)((it) => {
  it.describe("/api/v1/webhooks", () => {
    it.effect("creates a webhook, shows the secret once, lists a bare array without it", () =>
      Effect.gen(function* () {
        const { alice, bob } = yield* Orgs
        const api = yield* client(alice.key)
        const [created, createdReply] = yield* api.webhooks.create({ payload: { url: "https://hooks.example.com/in" }, responseMode: "decoded-and-response" })
        expect(createdReply.status).toBe(201)
        expect(created).toMatchObject({ url: "https://hooks.example.com/in", events: ["*"], status: "active" })
        expect(created.secret).toMatch(/^whsec_/)
        expect(created.id).toEqual(expect.any(String))
        const [listed, listedReply] = yield* api.webhooks.list({ responseMode: "decoded-and-response" })
        expect(listedReply.status).toBe(200)
        expect(Array.isArray(listed)).toBe(true)
        expect(listed).toEqual([expect.objectContaining({ id: created.id, secret: null, events: ["*"] })])
        expect(yield* (yield* client(bob.key)).webhooks.list({})).toEqual([])
      })
    )

    it.effect("lets a member add a webhook but not delete one: only owners and admins silence an endpoint", () =>
      Effect.gen(function* () {
        const { alice } = yield* Orgs
        const owner = yield* client(alice.key)
        const watched = yield* owner.webhooks.create({ payload: { url: "https://hooks.example.com/audit" } })
        const teammate = yield* client((yield* member(alice, "member")).key)
        const [own, ownReply] = yield* teammate.webhooks.create({ payload: { url: "https://hooks.example.com/member" }, responseMode: "decoded-and-response" })
        expect(ownReply.status).toBe(201)
        for (const id of [watched.id, own.id]) {
          const refused = yield* answer(teammate.webhooks.remove({ params: { webhook_id: id }, responseMode: "response-only" }))
          expect(refused.status).toBe(403)
          expect(refused.body.code).toBe("FORBIDDEN")
        }
        const admin = yield* client((yield* member(alice, "admin")).key)
        expect((yield* admin.webhooks.remove({ params: { webhook_id: own.id }, responseMode: "response-only" })).status).toBe(204)
        expect((yield* owner.webhooks.remove({ params: { webhook_id: watched.id }, responseMode: "response-only" })).status).toBe(204)
      })
    )

    it.effect("refuses plain http outside the allowed ranges and unknown events", () =>
      Effect.gen(function* () {
        const { alice } = yield* Orgs
        const api = yield* client(alice.key)
        const plain = yield* answer(api.webhooks.create({ payload: { url: "http://hooks.example.com/in" }, responseMode: "response-only" }))
        expect(plain.status).toBe(422)
        expect(plain.body.code).toBe("VALIDATION_ERROR")
        const local = yield* api.webhooks.create({ payload: { url: "http://127.0.0.1:9/in" }, responseMode: "response-only" })
        expect(local.status).toBe(201)
        const unknown = yield* api.webhooks.create({
          payload: { url: "https://hooks.example.com/x", events: ["action.approved", "nope.nothing"] },
          responseMode: "response-only"
        })
        expect(unknown.status).toBe(422)
        const chosen = yield* api.webhooks.create({ payload: { url: "https://hooks.example.com/x", events: ["action.approved", "case.complete"] } })
        expect(chosen.events).toEqual(["action.approved", "case.complete"])
      })
    )

    it.effect("lists deliveries and deletes; another organization gets 404", () =>
      Effect.gen(function* () {
        const { alice, bob } = yield* Orgs
        const api = yield* client(alice.key)
        const stranger = yield* client(bob.key)
        const created = yield* api.webhooks.create({ payload: { url: "https://hooks.example.com/d" } })
        const params = { webhook_id: created.id }
        const [deliveries, deliveriesReply] = yield* api.webhooks.deliveries({ params, query: { page: 1, per_page: 10 }, responseMode: "decoded-and-response" })
        expect(deliveriesReply.status).toBe(200)
        expect(deliveries.data).toEqual([])
        expect(deliveries.pagination).toMatchObject({ page: 1, per_page: 10, total: 0, has_more: false })
        expect((yield* stranger.webhooks.deliveries({ params, query: {}, responseMode: "response-only" })).status).toBe(404)
        expect((yield* stranger.webhooks.remove({ params, responseMode: "response-only" })).status).toBe(404)
        const removed = yield* api.webhooks.remove({ params, responseMode: "response-only" })
        expect(removed.status).toBe(204)
        expect((yield* api.webhooks.remove({ params, responseMode: "response-only" })).status).toBe(404)
        const listed = yield* api.webhooks.list({})
        expect(listed.map((w) => w.id)).not.toContain(created.id)
      })
    )

    it.effect("needs the webhooks scopes", () =>
      Effect.gen(function* () {
        const { alice } = yield* Orgs
        const [key, keyReply] = yield* (yield* client(alice.token)).apiKeys.create({
          payload: { name: "reader", scopes: ["webhooks:read"] },
          responseMode: "decoded-and-response"
        })
        expect(keyReply.status).toBe(201)
        const reader = yield* client(key.key)
        expect((yield* reader.webhooks.list({ responseMode: "response-only" })).status).toBe(200)
        const denied = yield* reader.webhooks.create({ payload: { url: "https://hooks.example.com/z" }, responseMode: "response-only" })
        expect(denied.status).toBe(403)
      })
    )
  })

  it.describe("/api/v1/approvers/notification-channels", () => {
    it.effect("admins and owners read and write the settings; URLs come back masked; members are refused", () =>
      Effect.gen(function* () {
        const { alice, bob } = yield* Orgs
        const owner = yield* client(alice.token)
        const [empty, emptyReply] = yield* owner.notificationChannels.get({ responseMode: "decoded-and-response" })
        expect(emptyReply.status).toBe(200)
        expect(empty).toMatchObject({ email: { enabled: false, recipients: [] }, slack: { enabled: false, webhook_url: null }, teams: { enabled: false, webhook_url: null } })
        const [put, putReply] = yield* owner.notificationChannels.put({
          payload: { email: { enabled: true, recipients: ["ops@example.test"] }, slack: { enabled: true, webhook_url: "https://hooks.slack.example/services/T1/B2/abcdefsecret" } },
          responseMode: "decoded-and-response"
        })
        expect(putReply.status).toBe(200)
        expect(put.slack.enabled).toBe(true)
        expect(put.slack.webhook_url).not.toContain("abcdefsecret")
        const read = yield* (yield* client(alice.key)).notificationChannels.get({})
        expect(read).toMatchObject({ email: { enabled: true, recipients: ["ops@example.test"] }, slack: { enabled: true, webhook_url: put.slack.webhook_url } })
        const other = yield* (yield* client(bob.token)).notificationChannels.get({})
        expect(other.slack.webhook_url).toBeNull()
        const teammate = yield* client((yield* member(alice, "member")).token)
        expect((yield* teammate.notificationChannels.get({ responseMode: "response-only" })).status).toBe(403)
        const bad = yield* owner.notificationChannels.put({
          payload: { teams: { enabled: true, webhook_url: "http://hooks.example.com/x" } },
          responseMode: "response-only"
        })
        expect(bad.status).toBe(422)
      })
    )
  })
})
