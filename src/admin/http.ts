/** Handlers of `/api/v1/admin/*`: plans (the accounts area) and signing-key rotation (the receipts area). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { Conflict, NotFound } from "../../protocol/errors.js"
import { Accounts } from "../accounts/service.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Receipts } from "../receipts/service.js"

const audit = Effect.map(HttpServerRequest, (request) => ({ requestId: requestIdOf(request) }))

export const AdminHttp = HttpApiBuilder.group(GatewayApi, "admin", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const receipts = yield* Receipts
    return handlers
      .handle("setPlan", ({ params, payload }) =>
        Effect.flatMap(audit, (context) => answer({ OrganizationNotFound: NotFound })(accounts.setPlan(params.org_uuid, payload.plan, context)))
      )
      .handle("rotateSigningKey", () => Effect.flatMap(audit, (context) => answer({ RotationInProgress: Conflict })(receipts.rotate(context))))
  })
)
