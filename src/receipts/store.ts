/**
 * SQL for signing keys, the timestamp authority identity and receipts. Every
 * function reads the SqlClient when it runs, so it joins the caller's
 * transaction (a receipt is written with the action's terminal state).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient, type Statement } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Count, NullableTimestamp, Timestamp } from "../platform/columns.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

export const SigningKeyRow = Schema.Struct({
  public_key_id: Schema.String,
  /** Base64url of the 32 raw Ed25519 public key bytes. */
  public_key_raw: Schema.String,
  private_key_sealed: Schema.String,
  status: Schema.Literals(["active", "retired"]),
  created_at: Timestamp,
  retired_at: NullableTimestamp
})
export type SigningKeyRow = typeof SigningKeyRow.Type

export const TsaIdentityRow = Schema.Struct({
  id: Schema.String,
  algorithm: Schema.String,
  /** Base64 DER. */
  certificate_der: Schema.String,
  private_key_sealed: Schema.String
})
export type TsaIdentityRow = typeof TsaIdentityRow.Type

export const ReceiptRow = Schema.Struct({
  receipt_uuid: Schema.String,
  action_uuid: Schema.String,
  org_uuid: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  agent_sequence: Count,
  receipt_status: Schema.String,
  receipt_version: Schema.String,
  signed_payload: Schema.String,
  payload_hash: Schema.String,
  signature: Schema.String,
  public_key_id: Schema.String,
  timestamp_token: Schema.NullOr(Schema.String),
  created_at: Timestamp
})
export type ReceiptRow = typeof ReceiptRow.Type

/** Rows of `statement` decoded as `Result`, with the SqlClient in scope (the caller's transaction). */
const rowsOf = <S extends Schema.Top>(Result: S, statement: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Rows.findAll({ Request: Schema.Void, Result, execute: () => statement(sql) })(undefined))

/** The one row of `statement`, or undefined. */
const rowOf = <S extends Schema.Top>(Result: S, statement: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(Rows.findOneOption({ Request: Schema.Void, Result, execute: () => statement(sql) })(undefined), Option.getOrUndefined)
  )

const PublicKeyId = Schema.Struct({ public_key_id: Schema.String })

/*
 * The statements, each failing only with what the caller can act on (`sqlDefects`). The two
 * insertion fragments below stay outside: they are embedded in the caller's statement, not run.
 */
export const {
  activeSigningKey,
  allSigningKeys,
  signingKeyById,
  insertActiveKeyIfNone,
  retireActiveKey,
  tsaIdentity,
  insertTsaIdentityIfNone,
  receiptByUuid,
  latestReceiptOfAction,
  receiptInChain
} = sqlDefects({
  activeSigningKey: rowOf(SigningKeyRow, (sql) => sql`SELECT * FROM signing_keys WHERE status = 'active'`),

  /** Every key, the active one first, then the newest retired. */
  allSigningKeys: rowsOf(SigningKeyRow, (sql) => sql`SELECT * FROM signing_keys ORDER BY (status = 'active') DESC, created_at DESC, public_key_id`),

  signingKeyById: (publicKeyId: string) => rowOf(SigningKeyRow, (sql) => sql`SELECT * FROM signing_keys WHERE public_key_id = ${publicKeyId}`),

  /** Inserts an active key unless one already exists (the partial unique index decides); true when inserted. */
  insertActiveKeyIfNone: (key: { publicKeyId: string; publicKeyRaw: string; sealed: string }) =>
    Effect.map(
      rowsOf(
        PublicKeyId,
        (sql) => sql`
      INSERT INTO signing_keys (public_key_id, public_key_raw, private_key_sealed, status)
      VALUES (${key.publicKeyId}, ${key.publicKeyRaw}, ${key.sealed}, 'active')
      ON CONFLICT DO NOTHING
      RETURNING public_key_id`
      ),
      (rows) => rows.length > 0
    ),

  /** Retires the active key (if any) and returns its id; run in the same transaction as the insert of its successor. */
  retireActiveKey: Effect.map(
    rowOf(PublicKeyId, (sql) => sql`UPDATE signing_keys SET status = 'retired', retired_at = now() WHERE status = 'active' RETURNING public_key_id`),
    (row) => (row === undefined ? null : row.public_key_id)
  ),

  tsaIdentity: (id: string) =>
    rowOf(TsaIdentityRow, (sql) => sql`SELECT id, algorithm, certificate_der, private_key_sealed FROM tsa_identity WHERE id = ${id}`),

  /** First writer wins; a concurrent starter reads the winner's identity back. */
  insertTsaIdentityIfNone: (identity: TsaIdentityRow) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Rows.void({
        Request: TsaIdentityRow,
        execute: (identity) => sql`
      INSERT INTO tsa_identity (id, algorithm, certificate_der, private_key_sealed)
      VALUES (${identity.id}, ${identity.algorithm}, ${identity.certificate_der}, ${identity.private_key_sealed})
      ON CONFLICT (id) DO NOTHING`
      })(identity)
    ),

  receiptByUuid: (receiptUuid: string) => rowOf(ReceiptRow, (sql) => sql`SELECT * FROM receipts WHERE receipt_uuid = ${receiptUuid}`),

  latestReceiptOfAction: (actionUuid: string) =>
    rowOf(ReceiptRow, (sql) => sql`SELECT * FROM receipts WHERE action_uuid = ${actionUuid} ORDER BY created_at DESC, agent_sequence DESC LIMIT 1`),

  /** The receipt at `sequence` in the (org, agent) chain; a null agent is the per-org default chain. */
  receiptInChain: (orgUuid: string, agentId: string | null, sequence: number) =>
    rowOf(
      ReceiptRow,
      (sql) => sql`SELECT * FROM receipts WHERE org_uuid = ${orgUuid} AND COALESCE(agent_id, '') = ${agentId ?? ""} AND agent_sequence = ${sequence}`
    )
})

/**
 * The receipt's INSERT as a fragment, to run as a CTE of the statement that finishes its action
 * (one statement, one commit).
 */
export const receiptInsertion = (sql: SqlClient.SqlClient, receipt: ReceiptRow): Statement.Fragment =>
  sql`INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_id, agent_sequence, receipt_status, receipt_version,
        signed_payload, payload_hash, signature, public_key_id, timestamp_token, created_at)
      VALUES (${receipt.receipt_uuid}, ${receipt.action_uuid}, ${receipt.org_uuid}, ${receipt.agent_id}, ${receipt.agent_sequence},
        ${receipt.receipt_status}, ${receipt.receipt_version}, ${receipt.signed_payload}, ${receipt.payload_hash}, ${receipt.signature},
        ${receipt.public_key_id}, ${receipt.timestamp_token}, ${receipt.created_at})`

/**
 * Many receipts in one INSERT, for the commit pipeline's batch statement: the rows travel as one
 * JSON array and are read back as records of the table's own type.
 */
export const receiptsInsertion = (sql: SqlClient.SqlClient, receipts: ReadonlyArray<ReceiptRow>): Statement.Fragment =>
  sql`INSERT INTO receipts SELECT * FROM jsonb_populate_recordset(NULL::receipts, ${JSON.stringify(receipts)}::jsonb)`
