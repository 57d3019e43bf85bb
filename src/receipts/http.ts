/** Handlers of `/api/v1/receipts/*`, `/api/v1/verify/*`, `/api/v1/tsa/*` and the `.well-known` documents (see protocol/receipts.ts). */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { NotFound } from "../../protocol/errors.js"
import { requireScope } from "../access/guards.js"
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

export const ReceiptsHttp = Layer.mergeAll(ReceiptsPublicHandlers, ReceiptsHandlers)
