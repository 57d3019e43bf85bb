/** Handlers of `/api/v1/admin/*`: plans (the accounts area) and signing-key rotation (the receipts area). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { Accounts } from "../accounts/service.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Receipts } from "../receipts/service.js"

const audit = Effect.map(HttpServerRequest, (request) => ({ requestId: requestIdOf(request) }))

export const AdminHttp = HttpApiBuilder.group(GatewayApi, "admin", (handlers) =>
  Effect.gen(function* () {
    const accounts = yield* Accounts
    const receipts = yield* Receipts
    return handlers
      .handle("setPlan", ({ params, payload }) =>
        Effect.flatMap(audit, (context) => accounts.setPlan(params.org_uuid, payload.plan, context).pipe(refusals("AccountsError", "OrganizationNotFound")))
      )
      .handle("rotateSigningKey", () => Effect.flatMap(audit, (context) => receipts.rotate(context).pipe(refusals("ReceiptsError", "RotationInProgress"))))
  })
)
