/**
 * Endpoint whitelist end to end over HTTP: entries (admin approved, member
 * pending), admin-only approve / reject / delete, the strict / permissive mode,
 * approval requests filed by strict-mode misses, TLS pins against a local https
 * server, and cross-organization isolation of every route that takes an id.
 * Over the typed client (HttpApiClient over GatewayApi).
 */
import { X509Certificate } from "node:crypto"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AuthorizeRequest } from "../protocol/actions.js"
import { answer, client, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"
import { startTlsServer, type TlsServer } from "./support/tls.js"

class Orgs extends Context.Service<
  Orgs,
  { readonly org: Org; readonly other: Org; readonly teammate: { readonly key: string; readonly userUuid: string } }
>()("test/whitelist-http/Orgs") {}
class Tls extends Context.Service<Tls, TlsServer>()("test/whitelist-http/Tls") {}

const TlsLayer = Layer.effect(
  Tls,
  Effect.acquireRelease(
    Effect.promise(() => startTlsServer()),
    (server) => Effect.promise(() => server.stop())
  )
)

const Setup = Layer.effect(
  Orgs,
  Effect.gen(function* () {
    const org = yield* register("Whitelist Org")
    const other = yield* register("Other Org")
    return { org, other, teammate: yield* member(org, "member") }
  })
).pipe(Layer.provideMerge(Gateway.layer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8" })), Layer.provideMerge(TlsLayer))

const certFingerprint = (tls: TlsServer) => `sha256:${new X509Certificate(tls.certPem).fingerprint256.replace(/:/g, "").toLowerCase()}`

/** The whitelist routes of `token`'s typed client. */
const whitelist = (token: string) => Effect.map(client(token), (api) => api.whitelist)

const addEntry = (token: string, payload: { url_pattern: string; name: string; tls_fingerprint?: string }) =>
  Effect.flatMap(whitelist(token), (routes) => routes.add({ payload, responseMode: "decoded-and-response" }))
const setMode = (token: string, mode: "strict" | "permissive") =>
  Effect.flatMap(whitelist(token), (routes) => routes.setSettings({ payload: { mode }, responseMode: "decoded-and-response" }))
/** An authorize as answered (status and JSON body): refusals carry the approval request in `details`. */
const authorize = (token: string, endpointUrl: string, extra: Partial<AuthorizeRequest> = {}) =>
  Effect.flatMap(client(token), (api) =>
    answer(
      api.actions.authorize({
        headers: {},
        payload: { action_type: "http_call", details: "call the endpoint", instruction_hash: "sha256:abc", endpoint_url: endpointUrl, ...extra },
        responseMode: "response-only"
      })
    )
  )
const entries = (token: string) => Effect.map(Effect.flatMap(whitelist(token), (routes) => routes.list({})), (listed) => listed.entries)
const approvals = (token: string) => Effect.map(Effect.flatMap(whitelist(token), (routes) => routes.approvals({})), (listed) => listed.approvals)

liveLayer(Setup)((it) => {
  it.describe("entries", () => {
    it.effect("an entry added by an admin is approved; one added by a member is pending", () =>
      Effect.gen(function* () {
        const { org, teammate } = yield* Orgs
        const [byOwner, ownerReply] = yield* addEntry(org.key, { url_pattern: "https://owner.example.com/v1/*", name: "owner entry" })
        expect(ownerReply.status).toBe(201)
        expect(byOwner).toMatchObject({
          url_pattern: "https://owner.example.com/v1/*",
          name: "owner entry",
          status: "approved",
          tls_fingerprint: null,
          created_by: org.userUuid
        })
        expect(byOwner.id).toEqual(expect.any(String))
        expect(Date.parse(byOwner.created_at)).not.toBeNaN()

        const admin = yield* member(org, "admin")
        const [byAdmin, adminReply] = yield* addEntry(admin.key, { url_pattern: "https://admin.example.com/*", name: "admin entry" })
        expect(adminReply.status).toBe(201)
        expect(byAdmin.status).toBe("approved")

        const [byMember, memberReply] = yield* addEntry(teammate.key, { url_pattern: "https://member.example.com/*", name: "member entry" })
        expect(memberReply.status).toBe(201)
        expect(byMember.status).toBe("pending")
        expect(byMember.created_by).toBe(teammate.userUuid)

        const listed = yield* entries(teammate.key)
        const statusOf = (id: string) => listed.find((entry) => entry.id === id)?.status
        expect(statusOf(byOwner.id)).toBe("approved")
        expect(statusOf(byMember.id)).toBe("pending")
      })
    )

    it.effect("rejects a pattern that is not an http(s) URL", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const routes = yield* whitelist(org.key)
        const reply = yield* answer(routes.add({ payload: { url_pattern: "ftp://files.example.com/*", name: "ftp" }, responseMode: "response-only" }))
        expect(reply.status).toBe(422)
        expect(reply.body.code).toBe("VALIDATION_ERROR")
      })
    )

    it.effect("admins approve, reject and delete; members get 403 on each", () =>
      Effect.gen(function* () {
        const { org, teammate } = yield* Orgs
        const [proposed] = yield* addEntry(teammate.key, { url_pattern: "https://proposed.example.com/*", name: "proposed" })
        const params = { id: proposed.id }
        const asMember = yield* whitelist(teammate.key)

        for (const denied of [
          yield* answer(asMember.approve({ params, responseMode: "response-only" })),
          yield* answer(asMember.reject({ params, responseMode: "response-only" }))
        ]) {
          expect(denied.status).toBe(403)
          expect(denied.body.code).toBe("FORBIDDEN")
        }
        expect((yield* asMember.remove({ params, responseMode: "response-only" })).status).toBe(403)
        expect((yield* entries(org.key)).find((entry) => entry.id === proposed.id)?.status).toBe("pending")

        const asOwner = yield* whitelist(org.key)
        const [approved, approvedReply] = yield* asOwner.approve({ params, responseMode: "decoded-and-response" })
        expect(approvedReply.status).toBe(200)
        expect(approved).toMatchObject({ id: proposed.id, status: "approved" })
        expect((yield* entries(org.key)).find((entry) => entry.id === proposed.id)?.status).toBe("approved")

        const [rejected, rejectedReply] = yield* (yield* whitelist(org.token)).reject({ params, responseMode: "decoded-and-response" })
        expect(rejectedReply.status).toBe(200)
        expect(rejected).toMatchObject({ id: proposed.id, status: "rejected" })

        const [deleted, deletedReply] = yield* asOwner.remove({ params, responseMode: "decoded-and-response" })
        expect(deletedReply.status).toBe(200)
        expect(deleted).toMatchObject({ id: proposed.id, deleted: true })
        expect((yield* entries(org.key)).some((entry) => entry.id === proposed.id)).toBe(false)
        expect((yield* asOwner.remove({ params, responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("a pending or rejected entry does not whitelist its endpoint", () =>
      Effect.gen(function* () {
        const team = yield* register("Pending Org")
        const teammate = yield* member(team, "member")
        const [, strict] = yield* setMode(team.key, "strict")
        expect(strict.status).toBe(200)
        const [proposed] = yield* addEntry(teammate.key, { url_pattern: "https://pending.example.com/*", name: "pending" })
        expect(proposed.status).toBe("pending")
        const blocked = yield* authorize(team.key, "https://pending.example.com/x")
        expect(blocked.status).toBe(403)
        expect(blocked.body.code).toBe("ENDPOINT_NOT_WHITELISTED")

        const routes = yield* whitelist(team.key)
        yield* routes.approve({ params: { id: proposed.id } })
        expect((yield* authorize(team.key, "https://pending.example.com/x")).status).toBe(201)

        yield* routes.reject({ params: { id: proposed.id } })
        expect((yield* authorize(team.key, "https://pending.example.com/x")).status).toBe(403)
      })
    )
  })

  it.describe("settings", () => {
    it.effect("defaults to permissive; admins switch between strict and permissive; members get 403", () =>
      Effect.gen(function* () {
        const fresh = yield* register("Settings Org")
        const teammate = yield* member(fresh, "member")
        const [initial, initialReply] = yield* (yield* whitelist(fresh.key)).settings({ responseMode: "decoded-and-response" })
        expect(initialReply.status).toBe(200)
        expect(initial.mode).toBe("permissive")

        const [strict, strictReply] = yield* setMode(fresh.key, "strict")
        expect(strictReply.status).toBe(200)
        expect(strict.mode).toBe("strict")
        expect((yield* (yield* whitelist(teammate.key)).settings({})).mode).toBe("strict")

        const forbidden = yield* (yield* whitelist(teammate.key)).setSettings({ payload: { mode: "permissive" }, responseMode: "response-only" })
        expect(forbidden.status).toBe(403)
        expect((yield* (yield* whitelist(fresh.token)).settings({})).mode).toBe("strict")

        expect((yield* setMode(fresh.token, "permissive"))[0].mode).toBe("permissive")
        expect((yield* (yield* whitelist(fresh.key)).settings({})).mode).toBe("permissive")

        // Raw: a mode outside the contract's literals.
        const invalid = yield* raw("PUT", "/api/v1/endpoint-whitelist/settings", { token: fresh.key, body: { mode: "lenient" } })
        expect(invalid.status).toBe(422)
        expect(invalid.body.code).toBe("VALIDATION_ERROR")
      })
    )
  })

  it.describe("authorize against the whitelist", () => {
    it.effect("strict mode blocks with an approval request; approving it with add_pattern lets the same call through", () =>
      Effect.gen(function* () {
        const team = yield* register("Strict Org")
        yield* setMode(team.key, "strict")
        const url = "https://payments.example.com/v2/charges/ch_1"

        const blocked = yield* authorize(team.key, url, { agent_id: "billing-bot" })
        expect(blocked.status).toBe(403)
        expect(blocked.body.code).toBe("ENDPOINT_NOT_WHITELISTED")
        expect(blocked.body.details).toMatchObject({
          approval_id: expect.any(String),
          url_pattern_suggested: "https://payments.example.com/v2/charges/*"
        })
        const approvalId = blocked.body.details.approval_id as string
        const params = { id: approvalId }

        const routes = yield* whitelist(team.key)
        const [listed, listedReply] = yield* routes.approvals({ responseMode: "decoded-and-response" })
        expect(listedReply.status).toBe(200)
        const request = listed.approvals.find((approval) => approval.id === approvalId)
        expect(request).toMatchObject({ url, agent_id: "billing-bot", url_pattern_suggested: "https://payments.example.com/v2/charges/*", status: "pending" })
        expect(Date.parse(request!.requested_at)).not.toBeNaN()

        const [approved, approvedReply] = yield* routes.approveRequest({ params, payload: { add_pattern: true }, responseMode: "decoded-and-response" })
        expect(approvedReply.status).toBe(200)
        expect(approved).toMatchObject({ id: approvalId, status: "approved" })
        expect(approved.entry).toMatchObject({ url_pattern: "https://payments.example.com/v2/charges/*", status: "approved" })
        expect((yield* entries(team.key)).map((entry) => entry.url_pattern)).toContain("https://payments.example.com/v2/charges/*")

        const allowed = yield* authorize(team.key, url, { agent_id: "billing-bot" })
        expect(allowed.status).toBe(201)
        expect(allowed.body.status).toBe("authorized")
        expect(allowed.body.warnings ?? []).not.toEqual(expect.arrayContaining([expect.stringContaining("whitelist")]))

        // No body at all, as the SDKs send it: the typed client always sends one.
        const again = yield* raw("POST", `/api/v1/endpoint-approvals/${params.id}/approve`, { token: team.key })
        expect(again.status).toBe(409)
      })
    )

    it.effect("approving without add_pattern or rejecting adds no pattern; an approval lets the blocked request through once", () =>
      Effect.gen(function* () {
        const team = yield* register("No Pattern Org")
        yield* setMode(team.key, "strict")
        const first = yield* authorize(team.key, "https://one.example.com/a")
        const second = yield* authorize(team.key, "https://two.example.com/b")
        const routes = yield* whitelist(team.key)
        const [approved, approvedReply] = yield* routes.approveRequest({
          params: { id: first.body.details.approval_id },
          payload: null,
          responseMode: "decoded-and-response"
        })
        expect(approvedReply.status).toBe(200)
        expect(approved.entry).toBeNull()
        const [rejected, rejectedReply] = yield* routes.rejectRequest({ params: { id: second.body.details.approval_id }, responseMode: "decoded-and-response" })
        expect(rejectedReply.status).toBe(200)
        expect(rejected).toMatchObject({ id: second.body.details.approval_id, status: "rejected" })
        expect(yield* entries(team.key)).toEqual([])
        // CONTRACT.md: the approved request, retried as it was, is authorized once; then blocked again.
        expect((yield* authorize(team.key, "https://one.example.com/a", { action_type: "other_call" })).status).toBe(403)
        const retried = yield* authorize(team.key, "https://one.example.com/a")
        expect(retried.status, JSON.stringify(retried.body)).toBe(201)
        expect(retried.body.warnings.join(" ")).toContain(first.body.details.approval_id)
        expect((yield* authorize(team.key, "https://one.example.com/a")).status).toBe(403)
        expect((yield* authorize(team.key, "https://two.example.com/b")).status).toBe(403)
      })
    )

    it.effect("of concurrent resolutions of one request exactly one wins, and the pattern is added once", () =>
      Effect.gen(function* () {
        const team = yield* register("Race Org")
        yield* setMode(team.key, "strict")
        const blocked = yield* authorize(team.key, "https://race.example.com/v1/pay")
        const params = { id: blocked.body.details.approval_id as string }
        const routes = yield* whitelist(team.key)
        const replies = yield* Effect.all(
          Array.from({ length: 6 }, (_, i) =>
            answer(
              i % 2 === 0
                ? routes.approveRequest({ params, payload: { add_pattern: true }, responseMode: "response-only" })
                : routes.rejectRequest({ params, responseMode: "response-only" })
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409, 409, 409, 409])
        const winner = replies.find((reply) => reply.status === 200)!
        const patterns = (yield* entries(team.key)).map((entry) => entry.url_pattern)
        expect(patterns).toEqual(winner.body.status === "approved" ? ["https://race.example.com/v1/*"] : [])
        expect((yield* approvals(team.key)).find((approval) => approval.id === params.id)!.status).toBe(winner.body.status)
      })
    )

    it.effect("a request whose URL yields no valid pattern cannot be approved with add_pattern and stays pending", () =>
      Effect.gen(function* () {
        const team = yield* register("Odd URL Org")
        yield* setMode(team.key, "strict")
        const blocked = yield* authorize(team.key, "not a url at all")
        expect(blocked.status).toBe(403)
        const params = { id: blocked.body.details.approval_id as string }
        const routes = yield* whitelist(team.key)
        const refused = yield* answer(routes.approveRequest({ params, payload: { add_pattern: true }, responseMode: "response-only" }))
        expect(refused.status).toBe(422)
        expect(refused.body.code).toBe("VALIDATION_ERROR")
        expect((yield* approvals(team.key)).find((approval) => approval.id === params.id)!.status).toBe("pending")
        expect((yield* routes.approveRequest({ params, payload: null, responseMode: "response-only" })).status).toBe(200)
      })
    )

    it.effect("members may list approval requests but not resolve them", () =>
      Effect.gen(function* () {
        const { org, teammate } = yield* Orgs
        yield* setMode(org.key, "strict")
        yield* Effect.gen(function* () {
          const blocked = yield* authorize(org.key, "https://member-blocked.example.com/x")
          const params = { id: blocked.body.details.approval_id as string }
          expect((yield* approvals(teammate.key)).map((a) => a.id)).toContain(params.id)
          const asMember = yield* whitelist(teammate.key)
          expect((yield* asMember.approveRequest({ params, payload: { add_pattern: true }, responseMode: "response-only" })).status).toBe(403)
          expect((yield* asMember.rejectRequest({ params, responseMode: "response-only" })).status).toBe(403)
          expect((yield* approvals(org.key)).find((a) => a.id === params.id)!.status).toBe("pending")
        }).pipe(Effect.ensuring(Effect.orDie(setMode(org.key, "permissive"))))
      })
    )

    it.effect("permissive mode lets an unlisted endpoint through with a warning and files no request", () =>
      Effect.gen(function* () {
        const team = yield* register("Permissive Org")
        const reply = yield* authorize(team.key, "https://unlisted.example.com/x")
        expect(reply.status).toBe(201)
        expect(reply.body.status).toBe("authorized")
        expect(reply.body.warnings).toEqual(expect.arrayContaining([expect.stringContaining("https://unlisted.example.com/x")]))
        expect(yield* approvals(team.key)).toEqual([])
      })
    )

    it.effect("a trailing * matches any rest of the path, and only on the same scheme and host", () =>
      Effect.gen(function* () {
        const team = yield* register("Prefix Org")
        yield* setMode(team.key, "strict")
        expect((yield* addEntry(team.key, { url_pattern: "https://api.example.com/v1/*", name: "v1" }))[1].status).toBe(201)
        expect((yield* addEntry(team.key, { url_pattern: "https://exact.example.com/only", name: "exact" }))[1].status).toBe(201)

        expect((yield* authorize(team.key, "https://api.example.com/v1/")).status).toBe(201)
        expect((yield* authorize(team.key, "https://api.example.com/v1/charges/ch_1?expand=all")).status).toBe(201)
        expect((yield* authorize(team.key, "https://API.example.com/v1/charges")).status).toBe(201)
        expect((yield* authorize(team.key, "https://exact.example.com/only")).status).toBe(201)
        for (const url of [
          "https://api.example.com/v2/charges",
          "http://api.example.com/v1/charges",
          "https://evil.example.com/v1/charges",
          "https://api.example.com:8443/v1/charges",
          "https://exact.example.com/only/more"
        ]) {
          const reply = yield* authorize(team.key, url)
          expect(reply.status, url).toBe(403)
          expect(reply.body.code).toBe("ENDPOINT_NOT_WHITELISTED")
        }
      })
    )
  })

  it.describe("TLS pins", () => {
    it.effect("the right fingerprint is allowed; a wrong one is a hard 403 ENDPOINT_TLS_MISMATCH", () =>
      Effect.gen(function* () {
        const tls = yield* Tls
        const team = yield* register("TLS Org")
        const [good, goodReply] = yield* addEntry(team.key, { url_pattern: `https://127.0.0.1:${tls.port}/good/*`, name: "pinned", tls_fingerprint: certFingerprint(tls) })
        expect(goodReply.status).toBe(201)
        expect(good.tls_fingerprint).toBe(certFingerprint(tls))
        const wrong = `sha256:${"ab".repeat(32)}`
        expect((yield* addEntry(team.key, { url_pattern: `https://127.0.0.1:${tls.port}/bad/*`, name: "mispinned", tls_fingerprint: wrong }))[1].status).toBe(201)

        const allowed = yield* authorize(team.key, `https://127.0.0.1:${tls.port}/good/pay`)
        expect(allowed.status).toBe(201)
        expect(allowed.body.status).toBe("authorized")

        const mismatch = yield* authorize(team.key, `https://127.0.0.1:${tls.port}/bad/pay`)
        expect(mismatch.status).toBe(403)
        expect(mismatch.body.code).toBe("ENDPOINT_TLS_MISMATCH")

        // Still a hard block in permissive mode, and the upper-case form of a pin is the same pin.
        const upper = yield* register("TLS Upper Org")
        yield* addEntry(upper.key, { url_pattern: `https://127.0.0.1:${tls.port}/*`, name: "upper", tls_fingerprint: `sha256:${certFingerprint(tls).slice(7).toUpperCase()}` })
        expect((yield* authorize(upper.key, `https://127.0.0.1:${tls.port}/x`)).status).toBe(201)
      })
    )

    it.effect("a pin whose fingerprint is not sha256:<64 hex> is a validation error", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        // Raw: a pin outside the contract's sha256:<64 hex> pattern.
        const reply = yield* raw("POST", "/api/v1/endpoint-whitelist", { token: org.key, body: { url_pattern: "https://pin.example.com/*", name: "bad pin", tls_fingerprint: "md5:1234" } })
        expect(reply.status).toBe(422)
        expect(reply.body.code).toBe("VALIDATION_ERROR")
      })
    )
  })

  it.describe("cross-organization", () => {
    it.effect("another organization's key gets 404 on every whitelist and approval route that takes an id", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const [entry] = yield* addEntry(org.key, { url_pattern: "https://cross.example.com/*", name: "cross" })
        yield* setMode(org.key, "strict")
        const blocked = yield* authorize(org.key, "https://cross-blocked.example.com/x").pipe(Effect.ensuring(Effect.orDie(setMode(org.key, "permissive"))))
        const approvalId = blocked.body.details.approval_id as string

        const stranger = yield* whitelist(other.key)
        const entryParams = { params: { id: entry.id }, responseMode: "response-only" } as const
        const approvalParams = { params: { id: approvalId }, responseMode: "response-only" } as const
        const attempts = [
          ["approve entry", stranger.approve(entryParams)],
          ["reject entry", stranger.reject(entryParams)],
          ["delete entry", stranger.remove(entryParams)],
          ["approve request", stranger.approveRequest({ ...approvalParams, payload: {} })],
          ["reject request", stranger.rejectRequest(approvalParams)]
        ] as const
        for (const [label, attempt] of attempts) {
          const reply = yield* answer(attempt)
          expect(reply.status, label).toBe(404)
          expect(reply.body.code).toBe("NOT_FOUND")
        }
        // Nothing changed, and nothing leaks into the other organization's lists.
        expect((yield* entries(org.key)).find((e) => e.id === entry.id)?.status).toBe("approved")
        expect((yield* approvals(org.key)).find((a) => a.id === approvalId)?.status).toBe("pending")
        expect((yield* entries(other.key)).some((e) => e.id === entry.id)).toBe(false)
        expect(yield* approvals(other.key)).toEqual([])
        expect((yield* stranger.settings({})).mode).toBe("permissive")
      })
    )
  })
})
