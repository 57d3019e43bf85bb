/** Handlers of `/api/v1/receipts/*`, `/api/v1/verify/*`, `/api/v1/tsa/*` and the `.well-known` documents (see protocol/receipts.ts). */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../../protocol/api.js"
import { requireScope } from "../access/guards.js"
import { pdfResponse } from "../gateway/pdf-response.js"
import { refusals } from "../platform/wire-errors.js"
import { Receipts } from "./service.js"

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
      .handle("verifyAction", ({ params }) => receipts.verifyAction(params.action_uuid).pipe(refusals("ReceiptsError", "ActionReceiptNotFound")))
      .handle("verifyReceipt", ({ params }) => receipts.verifyReceipt(params.receipt_uuid).pipe(refusals("ReceiptsError", "ReceiptNotFound")))
  })
)

export const ReceiptsHandlers = HttpApiBuilder.group(GatewayApi, "receipts", (handlers) =>
  Effect.gen(function* () {
    const receipts = yield* Receipts
    return handlers
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("receipts:read")
          return yield* receipts.receiptOf(principal.orgUuid, params.receipt_uuid).pipe(refusals("ReceiptsError", "ReceiptNotFound"))
        })
      )
      .handle("export", ({ params, query }) =>
        Effect.gen(function* () {
          const principal = yield* requireScope("receipts:read")
          if (query.format === "pdf") {
            const { bytes, filename } = yield* receipts.exportPdf(principal.orgUuid, params.receipt_uuid).pipe(refusals("ReceiptsError", "ReceiptNotFound"))
            return pdfResponse(bytes, filename)
          }
          return yield* receipts.exportOf(principal.orgUuid, params.receipt_uuid).pipe(refusals("ReceiptsError", "ReceiptNotFound"))
        })
      )
  })
)

export const ReceiptsHttp = Layer.mergeAll(ReceiptsPublicHandlers, ReceiptsHandlers)
