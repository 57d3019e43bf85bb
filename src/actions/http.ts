/** Handlers of `/api/v1/actions*`: the authenticated group and the public approval routes. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import type { AuthorizeRequest } from "../../protocol/actions.js"
import { GatewayApi } from "../../protocol/api.js"
import { requireJwt, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { InvalidInput } from "../platform/domain-error.js"
import { refusals } from "../platform/wire-errors.js"
import { refuse } from "./errors.js"
import { Actions } from "./service.js"

const requestId = Effect.gen(function* () {
  return requestIdOf(yield* HttpServerRequest)
})

/**
 * The published SDK sends the key as an `Idempotency-Key` header: it counts as
 * the body's `idempotency_key`; both present and different is a validation error.
 */
const withIdempotencyHeader = (payload: AuthorizeRequest, header: string | undefined) => {
  if (header === undefined) return Effect.succeed(payload)
  const inBody = payload.idempotency_key ?? undefined
  if (inBody !== undefined && inBody !== header) return refuse(InvalidInput.one("idempotency_key", "differs from the Idempotency-Key header"))
  return Effect.succeed({ ...payload, idempotency_key: header })
}

const notFound = refusals("ActionsError", "ActionNotFound")
const dashboardRefusals = refusals("ActionsError", "ActionNotFound", "NotAllowedToDecide", "AlreadyResolved", "ApprovalExpired")
const tokenRefusals = refusals("ActionsError", "ActionNotFound", "AlreadyResolved", "CredentialExpired", "NotAllowedToDecide")

export const ActionsHandlers = HttpApiBuilder.group(GatewayApi, "actions", (handlers) =>
  Effect.gen(function* () {
    const actions = yield* Actions
    return handlers
      .handle("authorize", ({ headers, payload }) =>
        Effect.flatMap(requireScope("actions:write"), (principal) =>
          Effect.flatMap(withIdempotencyHeader(payload, headers["idempotency-key"]), (input) => actions.authorize(principal, input)).pipe(
            refusals("ActionsError", "InvalidInput", "ParentNotFound", "DuplicateRequest", "EndpointNotWhitelisted", "EndpointTlsMismatch", "PolicyDenied")
          )
        )
      )
      .handle("list", ({ query }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:read")
          const filter = {
            ...(query.action_type !== undefined ? { action_type: query.action_type } : {}),
            ...(query.agent_id !== undefined ? { agent_id: query.agent_id } : {}),
            ...(query.status !== undefined ? { status: query.status } : {})
          }
          return yield* actions.list(principal, filter, query.page ?? 1, query.per_page ?? 20)
        })
      )
      .handle("get", ({ params }) => Effect.flatMap(requireScope("actions:read"), (principal) => actions.get(principal, params.action_uuid).pipe(notFound)))
      .handle("notarize", ({ params, payload }) =>
        Effect.flatMap(requireScope("actions:write"), (principal) => actions
            .notarize(principal, params.action_uuid, payload)
            .pipe(refusals("ActionsError", "InvalidOutcome", "ActionNotFound", "InvalidActionState", "OutputScanViolation", "AgentDecommissioned")))
      )
      .handle("dashboardReview", ({ params }) =>
        Effect.flatMap(requireJwt, (principal) => actions.reviewFromDashboard(principal, params.action_uuid).pipe(refusals("ActionsError", "ActionNotFound", "NotAllowedToDecide")))
      )
      .handle("dashboardApprove", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* actions.fromDashboard(principal, params.action_uuid, "approve", yield* requestId).pipe(dashboardRefusals)
        })
      )
      .handle("dashboardDeny", ({ params, query }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* actions.fromDashboard(principal, params.action_uuid, "deny", yield* requestId, query.reason?.trim() || null).pipe(dashboardRefusals)
        })
      )
      .handle("cosign", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* actions.cosign(principal, params.action_uuid, yield* requestId).pipe(refusals("ActionsError", "ActionNotFound", "AlreadyCosigned", "NotAllowedToDecide"))
        })
      )
      .handle("hold", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:write")
          return yield* actions.setHold(principal, params.action_uuid, true, yield* requestId).pipe(notFound)
        })
      )
      .handle("release", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:write")
          return yield* actions.setHold(principal, params.action_uuid, false, yield* requestId).pipe(notFound)
        })
      )
      .handle("chain", ({ params }) => Effect.flatMap(requireScope("actions:read"), (principal) => actions.chain(principal, params.action_uuid).pipe(notFound)))
      .handle("replayContext", ({ params }) =>
        Effect.flatMap(requireScope("actions:read"), (principal) => actions.replayContext(principal, params.action_uuid).pipe(notFound))
      )
  })
)

export const ActionApprovalsHandlers = HttpApiBuilder.group(GatewayApi, "actionApprovals", (handlers) =>
  Effect.gen(function* () {
    const actions = yield* Actions
    return handlers
      .handle("review", ({ params }) => actions.review(params.code).pipe(refusals("ActionsError", "CodeNotFound", "CredentialExpired")))
      .handle("confirm", ({ params, payload }) =>
        Effect.flatMap(requestId, (id) => actions
            .confirm(params.code, payload.decision, payload.reason ?? null, id)
            .pipe(refusals("ActionsError", "CodeNotFound", "ActionNotFound", "CredentialExpired", "NotAllowedToDecide")))
      )
      .handle("tokenApprove", ({ params, query }) =>
        Effect.flatMap(requestId, (id) => actions.byToken(params.action_uuid, "approve", query.token, null, id).pipe(tokenRefusals))
      )
      .handle("tokenDeny", ({ params, query }) =>
        Effect.flatMap(requestId, (id) => actions.byToken(params.action_uuid, "deny", query.token, query.reason ?? null, id).pipe(tokenRefusals))
      )
  })
)

export const ActionsHttp = Layer.mergeAll(ActionsHandlers, ActionApprovalsHandlers)
