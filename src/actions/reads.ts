/** Reading actions: one with its receipt and cosignatures, a filtered page, a parent chain, the pending ones. */
import * as Effect from "effect/Effect"
import type { ActionStatus } from "../../protocol/actions.js"
import type { Principal } from "../../protocol/auth.js"
import { listPage } from "../../protocol/common.js"
import { receiptSummary } from "../receipts/summary.js"
import type { ActionsContext } from "./context.js"
import { ActionNotFound, refuse } from "./errors.js"

export interface ActionFilter {
  readonly action_type?: string
  readonly agent_id?: string
  readonly status?: ActionStatus
}

export const makeReads = ({ store }: ActionsContext) => {
  const get = Effect.fn("Actions.get")(function* (principal: Principal, actionUuid: string) {
    const found = yield* store.byIdWithCosignatures(principal.orgUuid, actionUuid)
    if (found === undefined) return yield* refuse(new ActionNotFound({}))
    const { action: row, cosignatures: authorizations } = found
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
      receipt: row.receipt ? { ...receiptSummary(row.receipt), created_at: row.receipt.created_at } : null,
      authorizations
    }
  })

  const list = Effect.fn("Actions.list")(function* (principal: Principal, filter: ActionFilter, page: number, perPage: number) {
    const [rows, total] = yield* store.list(principal.orgUuid, filter, page, perPage)
    return listPage(rows, { page, perPage, total }, "actions")
  })

  const chain = Effect.fn("Actions.chain")(function* (principal: Principal, actionUuid: string) {
    const links = yield* store.chain(principal.orgUuid, actionUuid, 1000)
    if (links.length === 0) return yield* refuse(new ActionNotFound({}))
    return { action_uuid: actionUuid, chain: links }
  })

  const pending = Effect.fn("Actions.pending")(function* (orgUuid: string, limit: number) {
    return yield* store.pending(orgUuid, limit)
  })

  return { get, list, chain, pending }
}
