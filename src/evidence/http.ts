/**
 * Handlers of `/api/v1/evidence/…` (scopes evidence:read / evidence:write; any role: the spec
 * names none). Time travel is a read, audited by the service.
 */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Evidence } from "./service.js"

const createErrors = answer({ EmptyActionList: BadRequest, ActionNotFound: NotFound, CrossOrgActions: Unprocessable, InvalidInput: Unprocessable })
const packageErrors = answer({ PackageNotFound: NotFound })
const timeTravelErrors = answer({ MissingReason: BadRequest, FutureTimestamp: BadRequest, InvalidInput: Unprocessable })
const chainErrors = answer({ ChainActionNotFound: NotFound })

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
          return yield* createErrors(evidence.createPackage(principal, payload, yield* requestContext))
        })
      )
      .handle("listPackages", ({ query }) => Effect.flatMap(read, (principal) => evidence.listPackages(principal, query)))
      .handle("getPackage", ({ params }) => Effect.flatMap(read, (principal) => packageErrors(evidence.getPackage(principal, params.package_uuid))))
      .handle("timeTravel", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* read
          return yield* timeTravelErrors(evidence.timeTravel(principal, payload, yield* requestContext))
        })
      )
      .handle("liabilityChain", ({ params }) => Effect.flatMap(read, (principal) => chainErrors(evidence.liabilityChain(principal, params.action_uuid))))
  })
)
