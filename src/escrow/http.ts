/** Handlers of `/api/v1/escrow/accounts*` (scopes escrow:read / escrow:write; resolving a dispute needs owner or admin). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Escrow } from "./service.js"

const auditContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const EscrowHttp = HttpApiBuilder.group(GatewayApi, "escrow", (handlers) =>
  Effect.gen(function* () {
    const escrow = yield* Escrow
    const read = requireScope("escrow:read")
    const write = requireScope("escrow:write")
    // Unfreezing an account decides a dispute: only the organization's owner or admins.
    const resolver = Effect.flatMap(write, requireRole(["owner", "admin"], "resolving escrow disputes"))
    return handlers
      .handle("create", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* write
          return yield* escrow
            .create(principal, payload, yield* auditContext)
            .pipe(refusals("EscrowError", "UnsupportedCurrency", "EscrowAgentNotFound", "EscrowAgentDecommissioned"))
        })
      )
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => escrow.list(principal, query)))
      .handle("get", ({ params }) => Effect.flatMap(read, (principal) => escrow.get(principal, params.account_uuid).pipe(refusals("EscrowError", "EscrowAccountNotFound"))))
      .handle("transactions", ({ params, query }) =>
        Effect.flatMap(read, (principal) => escrow.transactions(principal, params.account_uuid, query).pipe(refusals("EscrowError", "EscrowAccountNotFound")))
      )
      .handle("deposit", ({ params, payload }) => Effect.flatMap(write, (principal) => escrow.deposit(principal, params.account_uuid, payload).pipe(refusals("EscrowError", "EscrowAccountNotFound", "InvalidAmount", "AccountFrozen"))))
      .handle("release", ({ params, payload }) => Effect.flatMap(write, (principal) => escrow
          .release(principal, params.account_uuid, payload)
          .pipe(refusals("EscrowError", "EscrowAccountNotFound", "InvalidAmount", "AccountFrozen", "InsufficientBalance"))))
      .handle("dispute", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* write
          const request = yield* HttpServerRequest
          // The optional signature is keyed by the credential this request carries (src/escrow/signature.ts).
          const credential = (request.headers.authorization ?? "").replace(/^Bearer\s+/i, "")
          return yield* escrow
            .dispute(principal, params.account_uuid, payload, credential, { requestId: requestIdOf(request) })
            .pipe(
              refusals(
                "EscrowError",
                "EscrowAccountNotFound",
                "InvalidAmount",
                "DisputeSignatureInvalid",
                "DisputeAlreadyOpen",
                "DisputeEvidenceNotFound",
                "InvalidInput"
              )
            )
        })
      )
      .handle("resolveDispute", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* resolver
          return yield* escrow.resolve(principal, params.account_uuid, payload, yield* auditContext).pipe(refusals("EscrowError", "EscrowAccountNotFound", "NoOpenDispute"))
        })
      )
  })
)
