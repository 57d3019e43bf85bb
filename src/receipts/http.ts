/** Handlers of the receipt groups: public keys and verification, the receipt export, key rotation. */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { Conflict, NotFound } from "../../protocol/errors.js"
import { requireScope } from "../access/guards.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Receipts } from "./service.js"

const lookupErrors = answer({ ReceiptNotFound: NotFound, ActionReceiptNotFound: NotFound })

export const ReceiptsPublicHandlers = HttpApiBuilder.group(GatewayApi, "receiptsPublic", (handlers) =>
  Effect.gen(function* () {
    const receipts = yield* Receipts
    return handlers
      .handle("jwks", () => receipts.jwks)
      .handle("didDocument", () => receipts.didDocument)
      .handle("tsaCertificate", ({ query }) =>
        Effect.succeed(
          query.format === "der"
            ? HttpServerResponse.uint8Array(receipts.tsaCertificateDer, { contentType: "application/pkix-cert" })
            : HttpServerResponse.text(receipts.tsaCertificatePem, { contentType: "application/pem-certificate-chain" })
        )
      )
      .handle("verifyAction", ({ params }) => lookupErrors(receipts.verifyAction(params.action_uuid)))
      .handle("verifyReceipt", ({ params }) => lookupErrors(receipts.verifyReceipt(params.receipt_uuid)))
  })
)

export const ReceiptsHandlers = HttpApiBuilder.group(GatewayApi, "receipts", (handlers) =>
  Effect.gen(function* () {
    const receipts = yield* Receipts
    return handlers.handle("get", ({ params }) =>
      Effect.gen(function* () {
        const principal = yield* requireScope("receipts:read")
        return yield* lookupErrors(receipts.receiptOf(principal.orgUuid, params.receipt_uuid))
      })
    )
  })
)

export const ReceiptsAdminHandlers = HttpApiBuilder.group(GatewayApi, "receiptsAdmin", (handlers) =>
  Effect.gen(function* () {
    const receipts = yield* Receipts
    return handlers.handle("rotateSigningKey", () =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest
        return yield* answer({ RotationInProgress: Conflict })(receipts.rotate({ requestId: requestIdOf(request) }))
      })
    )
  })
)

export const ReceiptsHttp = Layer.mergeAll(ReceiptsPublicHandlers, ReceiptsHandlers, ReceiptsAdminHandlers)
