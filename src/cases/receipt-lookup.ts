/** Case receipts found by receipt id, for the public `GET /api/v1/verify/{receipt_uuid}` (a port of the receipts area). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { CaseReceipt } from "../../protocol/cases.js"
import { Json } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"
import { ReceiptsElsewhere } from "../receipts/ports.js"

export const CaseReceiptsLookup = Layer.effect(ReceiptsElsewhere)(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const find = Rows.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ case_id: Schema.String, receipt: Json(CaseReceipt) }),
      execute: (receiptUuid) => sql`SELECT case_id, receipt FROM cases WHERE receipt->>'receipt_uuid' = ${receiptUuid} AND receipt IS NOT NULL`
    })
    const store = sqlDefects({ find })
    return ReceiptsElsewhere.of({
      byReceiptUuid: (receiptUuid) =>
        Effect.map(
          store.find(receiptUuid),
          Option.match({
            onNone: () => undefined,
            onSome: ({ case_id, receipt }) => ({
              receipt_uuid: receiptUuid,
              receipt_version: receipt.receipt_version,
              case_id,
              signed_payload: receipt.signed_payload,
              payload_hash: receipt.payload_hash,
              signature: receipt.signature,
              public_key_id: receipt.public_key_id,
              timestamp_token: receipt.timestamp_token
            })
          })
        )
    })
  })
)
