/**
 * Four eyes (CONTRACT.md): a member never receives the approval code of, and can never approve,
 * deny or cosign, an action authorized with their own credential (API key or JWT), by any route.
 * When a policy demands approval, approvers named in the request join the organization's
 * approvers; when only the request asks for it, they replace them as before.
 * Over the typed client (HttpApiClient over GatewayApi).
 */
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { AuthorizeRequest } from "../protocol/actions.js"
import { answer, client, member, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { gatewayWithMail, Mailbox } from "./support/mail.js"
import { Gateway } from "./support/server.js"

type Member = Effect.Success<ReturnType<typeof member>>

class Team extends Context.Service<Team, { readonly owner: Org; readonly member: Member; readonly colleague: Member }>()("test/four-eyes/Team") {}

const Server = gatewayWithMail()

const Setup = Layer.effect(
  Team,
  Effect.gen(function* () {
    const owner = yield* register("Four Eyes Org")
    // The e-mail channel on, so approvers receive codes.
    yield* (yield* client(owner.token)).notificationChannels.put({ payload: { email: { enabled: true } } })
    const teammate = yield* member(owner, "member")
    const colleague = yield* member(owner, "member")
    const [, policy] = yield* (yield* client(owner.key)).policies.create({
      payload: { name: "wires need a human", mode: "rules", decision: "require_approval", conditions: [{ field: "action_type", op: "eq", value: "wire" }], activate: true },
      responseMode: "decoded-and-response"
    })
    expect(policy.status).toBe(201)
    return { owner, member: teammate, colleague }
  })
).pipe(Layer.provideMerge(Server))

const authorize = (token: string, payload: Omit<AuthorizeRequest, "details">) =>
  Effect.gen(function* () {
    const [created, reply] = yield* (yield* client(token)).actions.authorize({
      headers: {},
      payload: { details: "send 9,000 EUR to an account", ...payload },
      responseMode: "decoded-and-response"
    })
    expect(reply.status).toBe(201)
    expect(created.status).toBe("pending_approval")
    return created.action_uuid
  })

/** Who got a personal code for the action, once the mails settle (the owner's arrives first or with the others). */
const codeHolders = (actionUuid: string, expected: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const inbox = yield* Mailbox
    for (const email of expected) yield* Effect.promise(() => inbox.grant(actionUuid, email))
    // Kept: a quiet spell for a code nobody expected to arrive (an absence has no event to wait for).
    yield* Effect.sleep("300 millis")
    return new Set(inbox.mails.filter((mail) => mail.text.includes(`/actions/${actionUuid}/approve?token=`)).flatMap((mail) => mail.to))
  })

liveLayer(Setup)((it) => {
  it.describe("four eyes", () => {
    it.effect("a member naming themselves as approver past an admin's policy gets no code, and no route lets them decide or cosign", () =>
      Effect.gen(function* () {
        const { owner, member } = yield* Team
        const actionUuid = yield* authorize(member.key, { action_type: "wire", approvers: [member.email] })
        const holders = yield* codeHolders(actionUuid, [owner.email])
        expect(holders.has(owner.email.toLowerCase())).toBe(true)
        expect(holders.has(member.email.toLowerCase())).toBe(false)

        const asMember = yield* client(member.token)
        const params = { action_uuid: actionUuid }
        const attempts = [
          [`GET /api/v1/actions/${actionUuid}/dashboard-review`, asMember.actions.dashboardReview({ params, responseMode: "response-only" })],
          [`POST /api/v1/actions/${actionUuid}/dashboard-approve`, asMember.actions.dashboardApprove({ params, responseMode: "response-only" })],
          [`POST /api/v1/actions/${actionUuid}/dashboard-deny?reason=mine`, asMember.actions.dashboardDeny({ params, query: { reason: "mine" }, responseMode: "response-only" })],
          [`POST /api/v1/actions/${actionUuid}/cosign`, asMember.actions.cosign({ params, responseMode: "response-only" })]
        ] as const
        for (const [route, request] of attempts) {
          const reply = yield* answer(request)
          expect(reply.status, route).toBe(403)
          expect(reply.body.message).toMatch(/four eyes/i)
        }
        expect((yield* (yield* client(owner.key)).actions.get({ params })).status).toBe("pending_approval")

        // The owner's own code decides it.
        const grant = yield* Effect.flatMap(Mailbox, (inbox) => Effect.promise(() => inbox.grant(actionUuid, owner.email)))
        const [confirmed, confirmedReply] = yield* (yield* client()).actionApprovals.confirm({
          params: { code: grant.code },
          payload: { decision: "approve" },
          responseMode: "decoded-and-response"
        })
        expect(confirmedReply.status).toBe(200)
        expect(confirmed.approver_email).toBe(owner.email.toLowerCase())
      })
    )

    it.effect("the same through the member's JWT, and when the member is one of the organization's default approvers", () =>
      Effect.gen(function* () {
        const { owner, member, colleague } = yield* Team
        const ownerApi = yield* client(owner.token)
        const [, defaults] = yield* ownerApi.team.setDefaultApprovers({ payload: { emails: [member.email, colleague.email] }, responseMode: "decoded-and-response" })
        expect(defaults.status).toBe(200)
        yield* Effect.gen(function* () {
          const actionUuid = yield* authorize(member.token, { action_type: "wire" })
          const holders = yield* codeHolders(actionUuid, [colleague.email])
          expect([...holders]).toEqual([colleague.email.toLowerCase()])
          const params = { action_uuid: actionUuid }
          expect((yield* (yield* client(member.token)).actions.dashboardApprove({ params, responseMode: "response-only" })).status).toBe(403)
          // The colleague, a default approver, decides from the dashboard.
          const [, approved] = yield* (yield* client(colleague.token)).actions.dashboardApprove({ params, responseMode: "decoded-and-response" })
          expect(approved.status).toBe(200)
        }).pipe(Effect.ensuring(Effect.ignore(ownerApi.team.setDefaultApprovers({ payload: { emails: [] } }))))
      })
    )

    it.effect("when a policy demands approval, named approvers join the organization's; when only the request asks, they replace them", () =>
      Effect.gen(function* () {
        const { owner, colleague } = yield* Team
        const byPolicy = yield* authorize(owner.key, { action_type: "wire", approvers: [colleague.email] })
        const policyHolders = yield* codeHolders(byPolicy, [owner.email, colleague.email])
        expect(policyHolders).toEqual(new Set([owner.email.toLowerCase(), colleague.email.toLowerCase()]))

        const byRequest = yield* authorize(owner.key, { action_type: "report", require_approval: true, approvers: [colleague.email] })
        const requestHolders = yield* codeHolders(byRequest, [colleague.email])
        expect(requestHolders).toEqual(new Set([colleague.email.toLowerCase()]))
      })
    )

    it.effect("a member asking for approval of their own action with only themselves named falls back to the organization's approvers", () =>
      Effect.gen(function* () {
        const { owner, member } = yield* Team
        const actionUuid = yield* authorize(member.key, { action_type: "report", require_approval: true, approvers: [member.email] })
        const holders = yield* codeHolders(actionUuid, [owner.email])
        expect(holders.has(member.email.toLowerCase())).toBe(false)
      })
    )

    it.effect("owners and admins may still approve what they authorized", () =>
      Effect.gen(function* () {
        const { owner } = yield* Team
        const actionUuid = yield* authorize(owner.key, { action_type: "wire" })
        const [, approved] = yield* (yield* client(owner.token)).actions.dashboardApprove({ params: { action_uuid: actionUuid }, responseMode: "decoded-and-response" })
        expect(approved.status).toBe(200)
      })
    )
  })
})
