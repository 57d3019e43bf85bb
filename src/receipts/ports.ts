/**
 * What actions ask of receipts. Implemented in `src/receipts/`.
 *
 * The signed payload is the JCS (RFC 8785) canonical form of `ReceiptPayload`;
 * absent values are `null`, never omitted (CONTRACT.md "Actions and receipts").
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Statement } from "effect/sql"
import type { ReceiptRow } from "./store.js"
import type { ReceiptSummary } from "./summary.js"

export type ReceiptStatus = "notarized" | "failed" | "denied" | "denied_by_human"

export interface ReceiptApproval {
  readonly decision: "approved" | "denied"
  readonly by: string | null
  readonly at: string
  readonly via: "code" | "token" | "dashboard" | "expiry"
  readonly reason: string | null
}

/** Everything of the payload except what the minter fills in (receipt_uuid, receipt_version, created_at). */
export interface ReceiptContent {
  readonly receipt_status: ReceiptStatus
  readonly action_uuid: string
  readonly org_uuid: string
  readonly agent_id: string | null
  readonly agent_version: string | null
  readonly action_type: string
  readonly action_details_hash: string
  readonly instruction_hash: string | null
  readonly model_id: string | null
  readonly model_version: string | null
  readonly outcome: "completed" | "failed" | null
  readonly outcome_hash: string | null
  readonly output_scan_flags: ReadonlyArray<Record<string, unknown>> | null
  readonly policy_uuid: string | null
  readonly approval: ReceiptApproval | null
  readonly parent_payload_hash: string | null
  readonly agent_sequence: number
  readonly previous_payload_hash: string | null
  /** The action's replay context hash: when set, the payload carries it and is version `1.3`. */
  readonly replay_context_hash?: string | null
  /** An id told to the client before the receipt existed (the LLM gateway's `X-Aira-Receipt-Id`); fresh otherwise. */
  readonly receipt_uuid?: string | null
}

export interface MintedReceipt extends ReceiptSummary {
  readonly created_at: string
  /** The exact canonical JSON that was signed. */
  readonly signed_payload: string
}

/** A receipt signed and timestamped, not yet stored: `row` goes into the statement that finishes its action. */
export interface SignedReceipt {
  readonly minted: MintedReceipt
  readonly row: ReceiptRow
}

export class ReceiptMinter extends Context.Service<
  ReceiptMinter,
  {
    /** Canonicalizes, hashes, signs and timestamps a receipt; stores nothing. */
    readonly sign: (content: ReceiptContent) => Effect.Effect<SignedReceipt>
    /**
     * The receipt's INSERT, to embed as a CTE in the statement that moves the action to its
     * terminal state (so action, receipt, chain head and events commit as one write).
     */
    readonly insertion: (receipt: SignedReceipt) => Statement.Fragment
    /** Several receipts' INSERT in one, for a batch statement (the commit pipeline). */
    readonly insertionOfAll: (receipts: ReadonlyArray<SignedReceipt>) => Statement.Fragment
  }
>()("gateway/ReceiptMinter") {}

/** A receipt signed like an action's but kept by another area (a case receipt), as the public verify needs it. */
export interface ReceiptKeptElsewhere {
  readonly receipt_uuid: string
  readonly receipt_version: string
  readonly case_id: string
  readonly signed_payload: string
  readonly payload_hash: string
  readonly signature: string
  readonly public_key_id: string
  readonly timestamp_token: string | null
}

/**
 * Finds receipts the receipts table does not hold, so `GET /api/v1/verify/{receipt_uuid}` verifies
 * any receipt by its id (CONTRACT.md). Implemented by the cases area.
 */
export class ReceiptsElsewhere extends Context.Service<
  ReceiptsElsewhere,
  { readonly byReceiptUuid: (receiptUuid: string) => Effect.Effect<ReceiptKeptElsewhere | undefined> }
>()("gateway/ReceiptsElsewhere") {}

