/** Handlers of `/api/v1/actions*`: the authenticated group and the public approval routes. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import type { AuthorizeRequest } from "../../protocol/actions.js"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, Conflict, Forbidden, Gone, NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireJwt, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { InvalidInput } from "../platform/domain-error.js"
import { answer } from "../platform/wire-errors.js"
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

const authorizeErrors = answer({
  InvalidInput: Unprocessable,
  StoredRefusal: Forbidden,
  DuplicateRequest: Conflict,
  ParentNotFound: NotFound,
  EndpointNotWhitelisted: Forbidden,
  EndpointTlsMismatch: Forbidden,
  PolicyDenied: Forbidden
})
const actionErrors = answer({ ActionNotFound: NotFound })
const notarizeErrors = answer({ InvalidOutcome: BadRequest, ActionNotFound: NotFound, InvalidActionState: Conflict, OutputScanViolation: Unprocessable, AgentDecommissioned: Unprocessable })
const dashboardErrors = answer({ ActionNotFound: NotFound, NotAllowedToDecide: Forbidden, AlreadyResolved: Conflict, ApprovalExpired: Conflict })
const cosignErrors = answer({ ActionNotFound: NotFound, AlreadyCosigned: Conflict, NotAllowedToDecide: Forbidden })
const reviewErrors = answer({ CodeNotFound: NotFound, CredentialExpired: Gone })
const confirmErrors = answer({ CodeNotFound: NotFound, ActionNotFound: NotFound, CredentialExpired: Gone, NotAllowedToDecide: Forbidden })
const tokenErrors = answer({ ActionNotFound: NotFound, AlreadyResolved: Conflict, CredentialExpired: Gone, NotAllowedToDecide: Forbidden })

export const ActionsHandlers = HttpApiBuilder.group(GatewayApi, "actions", (handlers) =>
  Effect.gen(function* () {
    const actions = yield* Actions
    return handlers
      .handle("authorize", ({ headers, payload }) =>
        Effect.flatMap(requireScope("actions:write"), (principal) =>
          authorizeErrors(Effect.flatMap(withIdempotencyHeader(payload, headers["idempotency-key"]), (input) => actions.authorize(principal, input)))
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
      .handle("get", ({ params }) => Effect.flatMap(requireScope("actions:read"), (principal) => actionErrors(actions.get(principal, params.action_uuid))))
      .handle("notarize", ({ params, payload }) =>
        Effect.flatMap(requireScope("actions:write"), (principal) => notarizeErrors(actions.notarize(principal, params.action_uuid, payload)))
      )
      .handle("dashboardReview", ({ params }) =>
        Effect.flatMap(requireJwt, (principal) => answer({ ActionNotFound: NotFound, NotAllowedToDecide: Forbidden })(actions.reviewFromDashboard(principal, params.action_uuid)))
      )
      .handle("dashboardApprove", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* dashboardErrors(actions.fromDashboard(principal, params.action_uuid, "approve", yield* requestId))
        })
      )
      .handle("dashboardDeny", ({ params, query }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* dashboardErrors(actions.fromDashboard(principal, params.action_uuid, "deny", yield* requestId, query.reason?.trim() || null))
        })
      )
      .handle("cosign", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireJwt
          return yield* cosignErrors(actions.cosign(principal, params.action_uuid, yield* requestId))
        })
      )
      .handle("hold", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:write")
          return yield* actionErrors(actions.setHold(principal, params.action_uuid, true, yield* requestId))
        })
      )
      .handle("release", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("actions:write")
          return yield* actionErrors(actions.setHold(principal, params.action_uuid, false, yield* requestId))
        })
      )
      .handle("chain", ({ params }) => Effect.flatMap(requireScope("actions:read"), (principal) => actionErrors(actions.chain(principal, params.action_uuid))))
  })
)

export const ActionApprovalsHandlers = HttpApiBuilder.group(GatewayApi, "actionApprovals", (handlers) =>
  Effect.gen(function* () {
    const actions = yield* Actions
    return handlers
      .handle("review", ({ params }) => reviewErrors(actions.review(params.code)))
      .handle("confirm", ({ params, payload }) =>
        Effect.flatMap(requestId, (id) => confirmErrors(actions.confirm(params.code, payload.decision, payload.reason ?? null, id)))
      )
      .handle("tokenApprove", ({ params, query }) =>
        Effect.flatMap(requestId, (id) => tokenErrors(actions.byToken(params.action_uuid, "approve", query.token, null, id)))
      )
      .handle("tokenDeny", ({ params, query }) =>
        Effect.flatMap(requestId, (id) => tokenErrors(actions.byToken(params.action_uuid, "deny", query.token, query.reason ?? null, id)))
      )
  })
)

export const ActionsHttp = Layer.mergeAll(ActionsHandlers, ActionApprovalsHandlers)
