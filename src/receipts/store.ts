/**
 * SQL for signing keys, the timestamp authority identity and receipts. Every
 * function reads the SqlClient when it runs, so it joins the caller's
 * transaction (a receipt is written with the action's terminal state).
 */
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { iso, isoRequired } from "../platform/sql.js"

export interface SigningKeyRow {
  readonly public_key_id: string
  /** Base64url of the 32 raw Ed25519 public key bytes. */
  readonly public_key_raw: string
  readonly private_key_sealed: string
  readonly status: "active" | "retired"
  readonly created_at: string
  readonly retired_at: string | null
}

export interface TsaIdentityRow {
  readonly id: string
  readonly algorithm: string
  /** Base64 DER. */
  readonly certificate_der: string
  readonly private_key_sealed: string
}

export interface ReceiptRow {
  readonly receipt_uuid: string
  readonly action_uuid: string
  readonly org_uuid: string
  readonly agent_id: string | null
  readonly agent_sequence: number
  readonly receipt_status: string
  readonly receipt_version: string
  readonly signed_payload: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token: string | null
  readonly created_at: string
}

const toKey = (row: any): SigningKeyRow => ({
  public_key_id: row.public_key_id,
  public_key_raw: row.public_key_raw,
  private_key_sealed: row.private_key_sealed,
  status: row.status,
  created_at: isoRequired(row.created_at),
  retired_at: iso(row.retired_at)
})

const toReceipt = (row: any): ReceiptRow => ({
  receipt_uuid: row.receipt_uuid,
  action_uuid: row.action_uuid,
  org_uuid: row.org_uuid,
  agent_id: row.agent_id ?? null,
  agent_sequence: Number(row.agent_sequence),
  receipt_status: row.receipt_status,
  receipt_version: row.receipt_version,
  signed_payload: row.signed_payload,
  payload_hash: row.payload_hash,
  signature: row.signature,
  public_key_id: row.public_key_id,
  timestamp_token: row.timestamp_token ?? null,
  created_at: isoRequired(row.created_at)
})

const first = <A>(rows: ReadonlyArray<any>, map: (row: any) => A): A | undefined => (rows.length === 0 ? undefined : map(rows[0]))

export const activeSigningKey = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return first(yield* sql`SELECT * FROM signing_keys WHERE status = 'active'`, toKey)
})

/** Every key, the active one first, then the newest retired. */
export const allSigningKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT * FROM signing_keys ORDER BY (status = 'active') DESC, created_at DESC, public_key_id`
  return rows.map(toKey)
})

export const signingKeyById = (publicKeyId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return first(yield* sql`SELECT * FROM signing_keys WHERE public_key_id = ${publicKeyId}`, toKey)
  })

/** Inserts an active key unless one already exists (the partial unique index decides); true when inserted. */
export const insertActiveKeyIfNone = (key: { publicKeyId: string; publicKeyRaw: string; sealed: string }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      INSERT INTO signing_keys (public_key_id, public_key_raw, private_key_sealed, status)
      VALUES (${key.publicKeyId}, ${key.publicKeyRaw}, ${key.sealed}, 'active')
      ON CONFLICT DO NOTHING
      RETURNING public_key_id`
    return rows.length > 0
  })

/** Retires the active key (if any) and returns its id; run in the same transaction as the insert of its successor. */
export const retireActiveKey = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`
    UPDATE signing_keys SET status = 'retired', retired_at = now()
    WHERE status = 'active'
    RETURNING public_key_id`
  return rows.length === 0 ? null : (rows[0] as any).public_key_id as string
})

export const tsaIdentity = (id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT id, algorithm, certificate_der, private_key_sealed FROM tsa_identity WHERE id = ${id}`
    return first(rows, (row): TsaIdentityRow => ({
      id: row.id,
      algorithm: row.algorithm,
      certificate_der: row.certificate_der,
      private_key_sealed: row.private_key_sealed
    }))
  })

/** First writer wins; a concurrent starter reads the winner's identity back. */
export const insertTsaIdentityIfNone = (identity: TsaIdentityRow) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO tsa_identity (id, algorithm, certificate_der, private_key_sealed)
      VALUES (${identity.id}, ${identity.algorithm}, ${identity.certificate_der}, ${identity.private_key_sealed})
      ON CONFLICT (id) DO NOTHING`
  })

export const insertReceipt = (receipt: ReceiptRow) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO receipts (receipt_uuid, action_uuid, org_uuid, agent_id, agent_sequence, receipt_status, receipt_version,
        signed_payload, payload_hash, signature, public_key_id, timestamp_token, created_at)
      VALUES (${receipt.receipt_uuid}, ${receipt.action_uuid}, ${receipt.org_uuid}, ${receipt.agent_id}, ${receipt.agent_sequence},
        ${receipt.receipt_status}, ${receipt.receipt_version}, ${receipt.signed_payload}, ${receipt.payload_hash},
        ${receipt.signature}, ${receipt.public_key_id}, ${receipt.timestamp_token}, ${receipt.created_at})`
  })

export const receiptByUuid = (receiptUuid: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return first(yield* sql`SELECT * FROM receipts WHERE receipt_uuid = ${receiptUuid}`, toReceipt)
  })

export const latestReceiptOfAction = (actionUuid: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      SELECT * FROM receipts WHERE action_uuid = ${actionUuid}
      ORDER BY created_at DESC, agent_sequence DESC LIMIT 1`
    return first(rows, toReceipt)
  })

/** The receipt at `sequence` in the (org, agent) chain; a null agent is the per-org default chain. */
export const receiptInChain = (orgUuid: string, agentId: string | null, sequence: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`
      SELECT * FROM receipts
      WHERE org_uuid = ${orgUuid} AND COALESCE(agent_id, '') = ${agentId ?? ""} AND agent_sequence = ${sequence}`
    return first(rows, toReceipt)
  })
