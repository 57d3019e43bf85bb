/** Handlers of `/api/v1/escrow/accounts*` (scopes escrow:read / escrow:write; resolving a dispute needs owner or admin). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, Conflict, NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Escrow } from "./service.js"

const createErrors = answer({ UnsupportedCurrency: BadRequest, AgentNotFound: NotFound, AgentDecommissioned: Unprocessable })
const findErrors = answer({ AccountNotFound: NotFound })
const depositErrors = answer({ AccountNotFound: NotFound, InvalidAmount: BadRequest, AccountFrozen: Conflict })
const releaseErrors = answer({ AccountNotFound: NotFound, InvalidAmount: BadRequest, AccountFrozen: Conflict, InsufficientBalance: BadRequest })
const disputeErrors = answer({
  AccountNotFound: NotFound,
  InvalidAmount: BadRequest,
  InvalidSignature: BadRequest,
  DisputeAlreadyOpen: Conflict,
  EvidenceNotFound: NotFound,
  InvalidInput: Unprocessable
})
const resolveErrors = answer({ AccountNotFound: NotFound, NoOpenDispute: Conflict })

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
          return yield* createErrors(escrow.create(principal, payload, yield* auditContext))
        })
      )
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => escrow.list(principal, query)))
      .handle("get", ({ params }) => Effect.flatMap(read, (principal) => findErrors(escrow.get(principal, params.account_uuid))))
      .handle("transactions", ({ params, query }) =>
        Effect.flatMap(read, (principal) => findErrors(escrow.transactions(principal, params.account_uuid, query)))
      )
      .handle("deposit", ({ params, payload }) => Effect.flatMap(write, (principal) => depositErrors(escrow.deposit(principal, params.account_uuid, payload))))
      .handle("release", ({ params, payload }) => Effect.flatMap(write, (principal) => releaseErrors(escrow.release(principal, params.account_uuid, payload))))
      .handle("dispute", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* write
          const request = yield* HttpServerRequest
          // The optional signature is keyed by the credential this request carries (src/escrow/signature.ts).
          const credential = (request.headers.authorization ?? "").replace(/^Bearer\s+/i, "")
          return yield* disputeErrors(escrow.dispute(principal, params.account_uuid, payload, credential, { requestId: requestIdOf(request) }))
        })
      )
      .handle("resolveDispute", ({ params, payload }) =>
        Effect.gen(function* () {
          const principal = yield* resolver
          return yield* resolveErrors(escrow.resolve(principal, params.account_uuid, payload, yield* auditContext))
        })
      )
  })
)
