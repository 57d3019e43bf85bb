/** Handlers of `/api/v1/actions*`: the authenticated group and the public approval routes. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import type { AuthorizeRequest } from "../../protocol/actions.js"
import { GatewayApi } from "../../protocol/api.js"
import { validationError } from "../../protocol/errors.js"
import { requireJwt, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
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
  if (inBody !== undefined && inBody !== header) {
    return Effect.fail(validationError([{ path: "idempotency_key", message: "differs from the Idempotency-Key header" }]))
  }
  return Effect.succeed({ ...payload, idempotency_key: header })
}

export const ActionsHandlers = HttpApiBuilder.group(GatewayApi, "actions", (handlers) =>
  Effect.gen(function* () {
    const actions = yield* Actions
    return handlers
      .handle("authorize", ({ headers, payload }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:write")
          return yield* actions.authorize(principal, yield* withIdempotencyHeader(payload, headers["idempotency-key"]))
        })
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
      .handle("get", ({ params }) => Effect.flatMap(requireScope("actions:read"), (principal) => actions.get(principal, params.action_uuid)))
      .handle("notarize", ({ params, payload }) =>
        Effect.flatMap(requireScope("actions:write"), (principal) => actions.notarize(principal, params.action_uuid, payload))
      )
      .handle("dashboardApprove", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* actions.fromDashboard(principal, params.action_uuid, "approve", yield* requestId)
        })
      )
      .handle("dashboardDeny", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* actions.fromDashboard(principal, params.action_uuid, "deny", yield* requestId)
        })
      )
      .handle("cosign", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* actions.cosign(principal, params.action_uuid, yield* requestId)
        })
      )
      .handle("hold", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:write")
          return yield* actions.setHold(principal, params.action_uuid, true, yield* requestId)
        })
      )
      .handle("release", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:write")
          return yield* actions.setHold(principal, params.action_uuid, false, yield* requestId)
        })
      )
      .handle("chain", ({ params }) => Effect.flatMap(requireScope("actions:read"), (principal) => actions.chain(principal, params.action_uuid)))
  })
)

export const ActionApprovalsHandlers = HttpApiBuilder.group(GatewayApi, "actionApprovals", (handlers) =>
  Effect.gen(function* () {
    const actions = yield* Actions
    return handlers
      .handle("review", ({ params }) => actions.review(params.code))
      .handle("confirm", ({ params, payload }) =>
        Effect.flatMap(requestId, (id) => actions.confirm(params.code, payload.decision, payload.reason ?? null, id))
      )
      .handle("tokenApprove", ({ params, query }) =>
        Effect.flatMap(requestId, (id) => actions.byToken(params.action_uuid, "approve", query.token, null, id))
      )
      .handle("tokenDeny", ({ params, query }) =>
        Effect.flatMap(requestId, (id) => actions.byToken(params.action_uuid, "deny", query.token, query.reason ?? null, id))
      )
  })
)

export const ActionsHttp = Layer.mergeAll(ActionsHandlers, ActionApprovalsHandlers)
