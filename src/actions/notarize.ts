/**
 * Notarize: the agent reports the outcome of an authorized (or approved) action; the organization's
 * output policy scans what it says, and the outcome's receipt is minted on the agent's chain.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { OutputScanReport } from "../../protocol/actions.js"
import type { Principal } from "../../protocol/auth.js"
import { OutputFiltering } from "../policies/ports.js"
import { filterOutput } from "../scan/output-filter.js"
import { type ActionsContext, sha256Text } from "./context.js"
import { ActionNotFound, InvalidActionState, InvalidOutcome, OutputScanViolation, refuse } from "./errors.js"
import type { NotarizeOptions } from "./options.js"
import { outputScanReport } from "./output-scan.js"

export const makeNotarize = ({ store, announceStatus, mint }: ActionsContext) =>
  Effect.gen(function* () {
    const outputFiltering = yield* OutputFiltering

    const notarize = Effect.fn("Actions.notarize")(function* (
      principal: Principal,
      actionUuid: string,
      input: { outcome?: string | null; outcome_details?: string | null },
      options?: NotarizeOptions
    ) {
      const outcome = input.outcome ?? "completed"
      if (outcome !== "completed" && outcome !== "failed") {
        return yield* refuse(InvalidOutcome.of(outcome))
      }
      const orgUuid = principal.orgUuid
      const current = yield* store.forTransition(orgUuid, actionUuid)
      if (current === undefined) return yield* refuse(new ActionNotFound({}))
      if (current.status !== "authorized" && current.status !== "approved") return yield* refuse(InvalidActionState.of(current.status))
      const details = input.outcome_details ?? null
      let outcomeHash: string | null = null
      let flags: ReadonlyArray<Record<string, unknown>> | null = null
      let report: OutputScanReport | null = null
      const warnings: Array<string> = []
      if (details !== null && options?.skipOutputScan === true) {
        outcomeHash = sha256Text(details)
      } else if (details !== null) {
        const policy = yield* outputFiltering.policyFor(orgUuid)
        const filtered = filterOutput(details, policy)
        if (filtered.denied) {
          return yield* refuse(OutputScanViolation.of(actionUuid, filtered.flags))
        }
        flags = filtered.flags.length > 0 ? filtered.flags.map((flag) => ({ ...flag })) : null
        if (policy.enabled) report = outputScanReport(policy, filtered.flags, new Date(yield* Clock.currentTimeMillis).toISOString())
        outcomeHash = sha256Text(filtered.redacted_text ?? details)
        if (filtered.redacted_text !== undefined && filtered.redacted_text !== details) warnings.push("outcome_details were redacted before hashing")
        if (filtered.flags.length > 0) warnings.push(`output scan flagged ${filtered.flags.map((flag) => flag.entity_type).join(", ")}`)
      }
      const status = outcome === "completed" ? "notarized" : "failed"
      const done = yield* mint(orgUuid, current.agent_id, {
        _tag: "Notarize",
        action_uuid: actionUuid,
        outcome,
        outcome_hash: outcomeHash,
        output_scan_flags: flags,
        read: current,
        ...(options?.receiptUuid === undefined ? {} : { receipt_uuid: options.receiptUuid })
      })
      yield* announceStatus(done.action, status, { receipt_uuid: done.receipt.receipt_uuid })
      return {
        action_uuid: actionUuid,
        status: status as "notarized" | "failed",
        receipt_uuid: done.receipt.receipt_uuid,
        payload_hash: done.receipt.payload_hash,
        signature: done.receipt.signature,
        public_key_id: done.receipt.public_key_id,
        timestamp_token: done.receipt.timestamp_token,
        created_at: done.receipt.created_at,
        warnings: warnings.length > 0 ? warnings : null,
        output_scan_flags: report
      }
    })

    return notarize
  })
