/** SQL for mutual-signing requests (one per action). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { MutualSignPayload } from "../../protocol/mutual-signing.js"
import { Json, NullableTimestamp, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const MutualSignRow = Schema.Struct({
  action_uuid: Schema.String,
  org_uuid: Schema.String,
  status: Schema.Literals(["pending", "completed", "rejected"]),
  initiator_did: Schema.NullOr(Schema.String),
  counterparty_did: Schema.String,
  payload: Json(MutualSignPayload),
  payload_hash: Schema.String,
  initiator_signature: Schema.String,
  counterparty_signature: Schema.NullOr(Schema.String),
  counterparty_signed_at: NullableTimestamp,
  combined_receipt_hash: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  expires_at: Timestamp,
  requested_at: Timestamp,
  sealed_at: NullableTimestamp
})
export type MutualSignRow = typeof MutualSignRow.Type

const NewRequest = Schema.Struct({
  actionUuid: Schema.String,
  orgUuid: Schema.String,
  initiatorDid: Schema.String,
  counterpartyDid: Schema.String,
  payload: MutualSignPayload,
  payloadHash: Schema.String,
  initiatorSignature: Schema.String,
  /** ISO 8601. */
  requestedAt: Schema.String,
  expiresAt: Schema.String
})
export type NewRequest = typeof NewRequest.Type

export const makeMutualSignStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const insert = Rows.findAll({
    Request: NewRequest,
    Result: MutualSignRow,
    execute: (r) =>
      sql`INSERT INTO mutual_signatures (action_uuid, org_uuid, status, initiator_did, counterparty_did, payload, payload_hash,
            initiator_signature, expires_at, requested_at)
          VALUES (${r.actionUuid}, ${r.orgUuid}, 'pending', ${r.initiatorDid}, ${r.counterpartyDid}, ${jsonb(r.payload)}, ${r.payloadHash},
            ${r.initiatorSignature}, ${r.expiresAt}, ${r.requestedAt})
          ON CONFLICT (action_uuid) DO NOTHING RETURNING *`
  })

  const find = Rows.findOneOption({
    Request: Schema.String,
    Result: MutualSignRow,
    execute: (actionUuid) => sql`SELECT * FROM mutual_signatures WHERE action_uuid = ${actionUuid}`
  })

  const complete = Rows.findOneOption({
    Request: Schema.Struct({ actionUuid: Schema.String, signature: Schema.String, combined: Schema.String }),
    Result: MutualSignRow,
    execute: ({ actionUuid, signature, combined }) =>
      sql`UPDATE mutual_signatures SET status = 'completed', counterparty_signature = ${signature}, counterparty_signed_at = now(),
            combined_receipt_hash = ${combined}, sealed_at = now()
          WHERE action_uuid = ${actionUuid} AND status = 'pending' AND expires_at > now() RETURNING *`
  })

  const reject = Rows.findOneOption({
    Request: Schema.Struct({ actionUuid: Schema.String, reason: Schema.String }),
    Result: MutualSignRow,
    execute: ({ actionUuid, reason }) =>
      sql`UPDATE mutual_signatures SET status = 'rejected', reason = ${reason}
          WHERE action_uuid = ${actionUuid} AND status = 'pending' AND expires_at > now() RETURNING *`
  })

  return sqlDefects({
    /** undefined when the action already has a request. */
    insert: (request: NewRequest) => Effect.map(insert(request), (rows) => rows[0]),
    find: (actionUuid: string) => Effect.map(find(actionUuid), Option.getOrUndefined),
    /** pending and unexpired → completed; undefined when it was not. */
    complete: (actionUuid: string, signature: string, combined: string) => Effect.map(complete({ actionUuid, signature, combined }), Option.getOrUndefined),
    /** pending and unexpired → rejected; undefined when it was not. */
    reject: (actionUuid: string, reason: string) => Effect.map(reject({ actionUuid, reason }), Option.getOrUndefined)
  })
})
