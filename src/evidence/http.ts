/**
 * Handlers of `/api/v1/evidence/…` (scopes evidence:read / evidence:write; any role: the spec
 * names none). Time travel is a read, audited by the service.
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Evidence } from "./service.js"

const requestContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const EvidenceHttp = HttpApiBuilder.group(GatewayApi, "evidence", (handlers) =>
  Effect.gen(function* () {
    const evidence = yield* Evidence
    const read = requireScope("evidence:read")
    const write = requireScope("evidence:write")
    return handlers
      .handle("createPackage", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* write
          return yield* evidence
            .createPackage(principal, payload, yield* requestContext)
            .pipe(refusals("EvidenceError", "EmptyActionList", "PackageActionsNotFound", "CrossOrgActions", "InvalidInput"))
        })
      )
      .handle("listPackages", ({ query }) => Effect.flatMap(read, (principal) => evidence.listPackages(principal, query)))
      .handle("getPackage", ({ params }) => Effect.flatMap(read, (principal) => evidence.getPackage(principal, params.package_uuid).pipe(refusals("EvidenceError", "PackageNotFound"))))
      .handle("timeTravel", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* read
          return yield* evidence
            .timeTravel(principal, payload, yield* requestContext)
            .pipe(refusals("EvidenceError", "MissingReason", "FutureTimestamp", "InvalidInput"))
        })
      )
      .handle("liabilityChain", ({ params }) => Effect.flatMap(read, (principal) => evidence.liabilityChain(principal, params.action_uuid).pipe(refusals("EvidenceError", "ChainActionNotFound"))))
  })
)
