/** Handlers of `/api/v1/actions/{action_uuid}/mutual-sign/…`: the initiator's request (key) and the counterparty's steps (public). */
import * as Effect from "effect/Effect"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireScope } from "../access/guards.js"
import { refusals } from "../platform/wire-errors.js"
import { MutualSigning } from "./service.js"

export const MutualSignHttp = HttpApiBuilder.group(GatewayApi, "mutualSign", (handlers) =>
  Effect.gen(function* () {
    const mutualSigning = yield* MutualSigning
    return handlers.handle("request", ({ params, payload }) =>
      Effect.flatMap(requireScope("actions:write"), (principal) =>
        mutualSigning
          .request(principal, params.action_uuid, payload.counterparty_did)
          .pipe(refusals("MutualSignError", "MutualSignNotFound", "MutualSignNoAgent", "MutualSignNoDidKey", "MutualSignAlreadyRequested"))
      )
    )
  })
)

export const MutualSignPublicHttp = HttpApiBuilder.group(GatewayApi, "mutualSignPublic", (handlers) =>
  Effect.gen(function* () {
    const mutualSigning = yield* MutualSigning
    return handlers
      .handle("pending", ({ params }) => mutualSigning.pending(params.action_uuid).pipe(refusals("MutualSignError", "MutualSignNotFound")))
      .handle("complete", ({ params, payload }) =>
        mutualSigning
          .complete(params.action_uuid, payload)
          .pipe(
            refusals(
              "MutualSignError",
              "MutualSignNotFound",
              "MutualSignNotPending",
              "MutualSignExpired",
              "MutualSignDidMismatch",
              "DidNoVerificationMethod",
              "DidUnsupportedKeyFormat",
              "MutualSignInvalidSignature",
              "MutualSignPayloadMismatch"
            )
          )
      )
      .handle("receipt", ({ params }) => mutualSigning.receipt(params.action_uuid).pipe(refusals("MutualSignError", "MutualSignNotFound", "MutualSignNotCompleted")))
      .handle("reject", ({ params, payload }) =>
        mutualSigning.reject(params.action_uuid, payload?.reason ?? "").pipe(refusals("MutualSignError", "MutualSignNotFound", "MutualSignNotPending"))
      )
  })
)
