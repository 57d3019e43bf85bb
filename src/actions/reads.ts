/** Reading actions: one with its receipt and cosignatures, a filtered page, a parent chain, the pending ones, a replay context. */
import * as Effect from "effect/Effect"
import type { ActionAuthorization, ActionStatus, ReplayContext } from "../../protocol/actions.js"
import type { Principal } from "../../protocol/auth.js"
import { listPage } from "../../protocol/common.js"
import { type ReceiptSummary, receiptSummary } from "../receipts/summary.js"
import type { ActionsContext } from "./context.js"
import { ActionNotFound, refuse } from "./errors.js"
import { replayFieldsOf } from "./replay-context.js"
import type { Cosignature } from "./store.js"

export interface ActionFilter {
  readonly action_type?: string
  readonly agent_id?: string
  readonly status?: ActionStatus
}

/** A cosignature as actions list it: also under the names the SDKs read (`id`, `authorizer_email`, `authorized_at`). */
const authorizationOf = (cosignature: Cosignature): ActionAuthorization => ({
  ...cosignature,
  id: cosignature.cosignature_uuid,
  authorizer_email: cosignature.cosigner_email,
  authorized_at: cosignature.cosigned_at
})

/** The receipt summary an action answers (the one kept on its row), or null before its receipt. */
const receiptOf = (receipt: (ReceiptSummary & { readonly created_at: string }) | null) =>
  receipt ? { ...receiptSummary(receipt), created_at: receipt.created_at } : null

export const makeReads = ({ store }: ActionsContext) => {
  const get = Effect.fn("Actions.get")(function* (principal: Principal, actionUuid: string) {
    const found = yield* store.byIdWithCosignatures(principal.orgUuid, actionUuid)
    if (found === undefined) return yield* refuse(new ActionNotFound({}))
    const { action: row, sdk, cosignatures } = found
    return {
      action_uuid: row.action_uuid,
      org_uuid: row.org_uuid,
      agent_id: row.agent_id,
      agent_version: row.agent_version,
      action_type: row.action_type,
      instruction_hash: row.instruction_hash,
      action_details_hash: row.action_details_hash,
      details_storage_key: row.details_storage_key,
      model_id: row.model_id,
      model_version: row.model_version,
      parent_action_uuid: row.parent_action_uuid,
      endpoint_url: row.endpoint_url,
      status: row.status,
      legal_hold: row.legal_hold,
      policy_uuid: row.policy_uuid,
      require_approval: row.require_approval,
      approvers: row.approvers,
      approved_by: row.approved_by,
      approved_at: row.approved_at,
      denial_reason: row.denial_reason,
      outcome: row.outcome,
      outcome_hash: row.outcome_hash,
      approval_expires_at: row.approval_expires_at,
      agent_sequence: row.agent_sequence,
      created_at: row.created_at,
      updated_at: row.updated_at,
      receipt: receiptOf(row.receipt),
      authorizations: cosignatures.map(authorizationOf),
      ...replayFieldsOf(sdk),
      replay_context_hash: row.replay_context_hash ?? null
    }
  })

  const list = Effect.fn("Actions.list")(function* (principal: Principal, filter: ActionFilter, page: number, perPage: number) {
    const [rows, total] = yield* store.list(principal.orgUuid, filter, page, perPage)
    const items = rows.map(({ cosignatures_json, sdk, receipt, ...row }) => ({
      ...row,
      receipt: receiptOf(receipt),
      authorizations: cosignatures_json.map(authorizationOf),
      ...replayFieldsOf(sdk)
    }))
    return listPage(items, { page, perPage, total }, "actions")
  })

  const replayContext = Effect.fn("Actions.replayContext")(function* (principal: Principal, actionUuid: string) {
    const row = yield* store.replayContext(principal.orgUuid, actionUuid)
    if (row === undefined) return yield* refuse(new ActionNotFound({}))
    return {
      action_uuid: row.action_uuid,
      ...replayFieldsOf(row.sdk),
      model_id: row.model_id,
      model_version: row.model_version,
      agent_id: row.agent_id,
      agent_version: row.agent_version,
      instruction_hash: row.instruction_hash,
      replay_context_hash: row.replay_context_hash,
      receipt_uuid: row.receipt?.receipt_uuid ?? null,
      receipt_version: row.receipt?.receipt_version ?? null
    } satisfies ReplayContext
  })

  const chain = Effect.fn("Actions.chain")(function* (principal: Principal, actionUuid: string) {
    const links = yield* store.chain(principal.orgUuid, actionUuid, 1000)
    if (links.length === 0) return yield* refuse(new ActionNotFound({}))
    return { action_uuid: actionUuid, chain: links }
  })

  const pending = Effect.fn("Actions.pending")(function* (orgUuid: string, limit: number) {
    return yield* store.pending(orgUuid, limit)
  })

  return { get, list, chain, pending, replayContext }
}
