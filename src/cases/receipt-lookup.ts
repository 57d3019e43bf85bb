/** Case receipts found by receipt id, for the public `GET /api/v1/verify/{receipt_uuid}` (a port of the receipts area). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import { ReceiptsElsewhere } from "../receipts/ports.js"

const text = (value: unknown) => (typeof value === "string" ? value : undefined)

export const CaseReceiptsLookup = Layer.effect(ReceiptsElsewhere)(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return ReceiptsElsewhere.of({
      byReceiptUuid: (receiptUuid) =>
        sql<{ case_id: string; receipt: unknown }>`SELECT case_id, receipt FROM cases WHERE receipt->>'receipt_uuid' = ${receiptUuid} AND receipt IS NOT NULL`.pipe(
          Effect.orDie,
          Effect.map((rows) => {
            const row = rows[0]
            const receipt = (typeof row?.receipt === "string" ? JSON.parse(row.receipt) : row?.receipt) as Record<string, unknown> | undefined
            if (row === undefined || receipt === undefined) return undefined
            const [signed_payload, payload_hash, signature, public_key_id] = [receipt.signed_payload, receipt.payload_hash, receipt.signature, receipt.public_key_id].map(text)
            if (signed_payload === undefined || payload_hash === undefined || signature === undefined || public_key_id === undefined) return undefined
            return {
              receipt_uuid: receiptUuid,
              receipt_version: text(receipt.receipt_version) ?? "1.0",
              case_id: row.case_id,
              signed_payload,
              payload_hash,
              signature,
              public_key_id,
              timestamp_token: text(receipt.timestamp_token) ?? null
            }
          })
        )
    })
  })
)
