/** Handlers of `/api/v1/actions/{action_uuid}/mutual-sign/…`: the initiator's request (key) and the counterparty's steps (public). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, Conflict, Forbidden, Gone, NotFound } from "../../protocol/errors.js"
import { requireScope } from "../access/guards.js"
import { answer } from "../platform/wire-errors.js"
import { MutualSigning } from "./service.js"

const requestErrors = answer({ ActionNotFound: NotFound, NoAgent: BadRequest, NoDidKey: BadRequest, AlreadyRequested: Conflict })
const pendingErrors = answer({ ActionNotFound: NotFound })
const completeErrors = answer({
  ActionNotFound: NotFound,
  NotPending: BadRequest,
  Expired: Gone,
  DidMismatch: Forbidden,
  NoVerificationMethod: BadRequest,
  UnsupportedKeyFormat: BadRequest,
  InvalidSignature: BadRequest,
  PayloadMismatch: BadRequest
})
const receiptErrors = answer({ ActionNotFound: NotFound, NotCompleted: BadRequest })
const rejectErrors = answer({ ActionNotFound: NotFound, NotPending: BadRequest })

export const MutualSignHttp = HttpApiBuilder.group(GatewayApi, "mutualSign", (handlers) =>
  Effect.gen(function* () {
    const mutualSigning = yield* MutualSigning
    return handlers.handle("request", ({ params, payload }) =>
      Effect.flatMap(requireScope("actions:write"), (principal) => requestErrors(mutualSigning.request(principal, params.action_uuid, payload.counterparty_did)))
    )
  })
)

export const MutualSignPublicHttp = HttpApiBuilder.group(GatewayApi, "mutualSignPublic", (handlers) =>
  Effect.gen(function* () {
    const mutualSigning = yield* MutualSigning
    return handlers
      .handle("pending", ({ params }) => pendingErrors(mutualSigning.pending(params.action_uuid)))
      .handle("complete", ({ params, payload }) => completeErrors(mutualSigning.complete(params.action_uuid, payload)))
      .handle("receipt", ({ params }) => receiptErrors(mutualSigning.receipt(params.action_uuid)))
      .handle("reject", ({ params, payload }) => rejectErrors(mutualSigning.reject(params.action_uuid, payload?.reason ?? "")))
  })
)
