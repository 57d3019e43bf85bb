/**
 * Authorize: an agent states its intent; the organization's whitelist and policies decide whether
 * it may go ahead, needs a human, or is denied (a denial mints its receipt at once). An
 * idempotency key makes a retried request answer what the first one did.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type AuthorizeRequest, AuthorizeResponse } from "../../protocol/actions.js"
import type { Principal } from "../../protocol/auth.js"
import { stampEvents } from "../events/service.js"
import { InvalidInput } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { record } from "../platform/metrics.js"
import { EndpointGuard, PolicyDecisions } from "../policies/ports.js"
import type { NewAction } from "./agent-messages.js"
import { reviewUrl, vouchedAddresses } from "./approvals.js"
import { DEFAULT_AGENT_ID } from "./chain.js"
import { type ActionsContext, sha256Text } from "./context.js"
import { DuplicateRequest, EndpointNotWhitelisted, EndpointTlsMismatch, ParentNotFound, PolicyDenied, refuse } from "./errors.js"
import { IDEMPOTENCY_RETENTION_MS, requestDigest, type StoredAnswer } from "./idempotency.js"
import { authorizeDecisions } from "./metrics.js"
import type { AuthorizeOptions } from "./options.js"
import { replayContextOf } from "./replay-context.js"

// A stored answer that does not decode is a defect: only this module writes them.
const decodeAnswer = (body: unknown) => Effect.orDie(Schema.decodeUnknownEffect(AuthorizeResponse)(body))
const decodeDenial = (body: unknown) =>
  Effect.orDie(
    Schema.decodeUnknownEffect(Schema.Struct({ code: Schema.Literal("POLICY_DENIED"), message: Schema.String, details: Schema.Record(Schema.String, Schema.Unknown) }))(body)
  )

export const makeAuthorize = ({ config, secrets, store, commit, announceStatus, announceNotification, mint, observed }: ActionsContext) =>
  Effect.gen(function* () {
    const policies = yield* PolicyDecisions
    const guard = yield* EndpointGuard
    const ttlMs = config.approvalTtlMs

    /** A stored answer, again: the 201 as it was, or the policy denial (the only refusal stored). */
    const replay = (answer: StoredAnswer) =>
      answer.status === 201
        ? decodeAnswer(answer.body)
        : Effect.flatMap(decodeDenial(answer.body), (denial) => refuse(new PolicyDenied({ message: denial.message, error: denial.message, details: denial.details })))

    /** Named approvers who will receive no code: neither members nor default approvers. */
    const ignoredApprovers = Effect.fnUntraced(function* (orgUuid: string, named: ReadonlyArray<string>) {
      const vouched = vouchedAddresses(yield* store.defaultApprovers(orgUuid), yield* store.activeMembers(orgUuid))
      return [...new Set(named.map((email) => email.toLowerCase()))].filter((email) => !vouched.has(email))
    })

    /** Claims the idempotency key; undefined = go ahead, otherwise the answer to give. */
    const claim = Effect.fnUntraced(function* (orgUuid: string, key: string, digest: string) {
        for (let attempt = 0; attempt < 2; attempt++) {
          if (yield* store.claimIdempotency(orgUuid, key, digest)) return undefined
          const record = yield* store.idempotencyRecord(orgUuid, key)
          if (record === undefined) continue
          const cutoff = (yield* Clock.currentTimeMillis) - IDEMPOTENCY_RETENTION_MS
          if (Date.parse(record.created_at) < cutoff) {
            yield* store.dropStaleIdempotency(orgUuid, key, new Date(cutoff).toISOString())
            continue
          }
          if (record.request_hash !== digest) {
            return yield* refuse(DuplicateRequest.of(key, "different_body"))
          }
          if (record.response === null || record.status_code === null) {
            return yield* refuse(DuplicateRequest.of(key, "in_flight"))
          }
          return { status: record.status_code, body: record.response } satisfies StoredAnswer
        }
        return yield* refuse(DuplicateRequest.of(key, "busy"))
    })

    const authorize = Effect.fn("Actions.authorize")(function* (principal: Principal, input: AuthorizeRequest, options?: AuthorizeOptions) {
      // The chain of actions sent without an agent is kept under this id: an agent may not join it.
      if (input.agent_id === DEFAULT_AGENT_ID) {
        return yield* refuse(InvalidInput.one("agent_id", `"${DEFAULT_AGENT_ID}" is reserved for the receipt chain of actions sent without an agent_id`))
      }
      const orgUuid = principal.orgUuid
      const key = input.idempotency_key ?? null
      if (key !== null) {
        const previous = yield* claim(orgUuid, key, requestDigest(input as Record<string, unknown>))
        if (previous !== undefined) return yield* replay(previous)
      }
      const run = authorizeFresh(principal, input, key, options?.policyContext)
      // A failure that created nothing frees the key so a corrected retry can use it.
      return yield* key === null ? run : run.pipe(Effect.onError(() => store.releaseIdempotency(orgUuid, key)))
    })

    const authorizeFresh = (principal: Principal, input: AuthorizeRequest, idempotencyKey: string | null, policyContext: Record<string, unknown> | undefined) =>
      Effect.gen(function* () {
        const orgUuid = principal.orgUuid
        const agentId = input.agent_id ?? null
        const parentUuid = input.parent_action_uuid ?? null
        let parentPayloadHash: string | null = null
        if (parentUuid !== null) {
          const parent = yield* store.byId(orgUuid, parentUuid)
          if (parent === undefined) return yield* refuse(ParentNotFound.of(parentUuid))
          parentPayloadHash = parent.receipt_payload_hash
        }
        const warnings: Array<string> = []
        if (!input.instruction_hash) warnings.push("instruction_hash was not provided: the receipt cannot commit to the agent's instructions")

        const endpointUrl = input.endpoint_url ?? null
        if (endpointUrl !== null) {
          const check = yield* guard.check(orgUuid, { url: endpointUrl, agentId, actionType: input.action_type })
          switch (check.outcome) {
            case "blocked":
              return yield* refuse(EndpointNotWhitelisted.of(check.approval_id, check.url_pattern_suggested))
            case "tls_mismatch":
              return yield* refuse(EndpointTlsMismatch.of(check.message, endpointUrl, check.expected, check.actual))
            case "warn":
              warnings.push(check.warning)
              break
            case "allowed":
              break
          }
        }

        const verdict = yield* policies.evaluate(orgUuid, {
          action_type: input.action_type,
          details: input.details,
          agent_id: agentId,
          agent_version: input.agent_version ?? null,
          model_id: input.model_id ?? null,
          model_version: input.model_version ?? null,
          endpoint_url: endpointUrl,
          instruction_hash: input.instruction_hash ?? null,
          context: policyContext ?? input.context ?? null
        })
        warnings.push(...verdict.warnings)

        const actionUuid = newId("act")
        const now = yield* Clock.currentTimeMillis
        const createdAt = new Date(now).toISOString()
        const storeDetails = input.store_details === true
        const replay = replayContextOf(input)
        const status: "authorized" | "pending_approval" | "denied_by_policy" =
          verdict.decision === "deny" ? "denied_by_policy" : verdict.decision === "require_approval" || input.require_approval === true ? "pending_approval" : "authorized"
        record(authorizeDecisions[status], 1)

        const pending = status === "pending_approval"
        const expiresAt = pending ? new Date(now + ttlMs) : null
        if (pending && input.approvers && input.approvers.length > 0) {
          const ignored = yield* ignoredApprovers(orgUuid, input.approvers)
          if (ignored.length > 0) {
            warnings.push(`approvers that are neither members nor default approvers of the organization receive no approval code: ${ignored.join(", ")}`)
          }
        }
        if (pending) {
          warnings.push(
            verdict.decision === "require_approval"
              ? `Human approval required by policy${verdict.policy_uuid ? ` ${verdict.policy_uuid}` : ""}: ${verdict.reasoning}`
              : "Human approval required (require_approval was set)"
          )
        }

        const row: NewAction = {
          action_uuid: actionUuid,
          org_uuid: orgUuid,
          agent_id: agentId,
          agent_version: input.agent_version ?? null,
          action_type: input.action_type,
          action_details_hash: sha256Text(input.details),
          instruction_hash: input.instruction_hash ?? null,
          details_sealed: storeDetails ? secrets.envelope.seal(input.details, `action-details:${actionUuid}`) : null,
          details_storage_key: storeDetails ? newId("dsk") : null,
          model_id: input.model_id ?? null,
          model_version: input.model_version ?? null,
          parent_action_uuid: parentUuid,
          endpoint_url: endpointUrl,
          replay_context_hash: replay?.hash ?? null,
          status,
          policy_uuid: verdict.policy_uuid,
          require_approval: input.require_approval === true,
          approvers: input.approvers ? [...new Set(input.approvers.map((email) => email.toLowerCase()))] : null,
          authorized_by: principal.userUuid,
          approval_by_policy: pending && verdict.decision === "require_approval",
          context: (input.context ?? null) as Record<string, unknown> | null,
          sdk: replay?.sdk ?? null,
          warnings,
          approval_expires_at: expiresAt?.toISOString() ?? null,
          policy_evaluations: verdict.evaluations,
          created_at: createdAt
        }

        if (status === "denied_by_policy") {
          const result = yield* mint(orgUuid, agentId, {
            _tag: "DenyByPolicy",
            row,
            reasoning: verdict.reasoning,
            policy_uuid: verdict.policy_uuid,
            idempotency_key: idempotencyKey,
            parent_payload_hash: parentPayloadHash
          })
          const receiptUuid = result.receipt.receipt_uuid
          yield* observed(row)
          yield* announceStatus(row, "denied_by_policy", { receipt_uuid: receiptUuid })
          return yield* refuse(PolicyDenied.of({ action_uuid: actionUuid, policy_uuid: verdict.policy_uuid, reasoning: verdict.reasoning, receipt_uuid: receiptUuid }))
        }

        const answer = {
          action_uuid: actionUuid,
          status: status as "authorized" | "pending_approval",
          created_at: createdAt,
          warnings: warnings.length > 0 ? warnings : null
        }
        // The event names the action and where to review it; approval secrets go to approvers by e-mail only.
        const outbox = stampEvents(
          [
            expiresAt !== null
              ? {
                  orgUuid,
                  type: "action.approval_requested",
                  data: {
                    action_uuid: actionUuid,
                    action_type: row.action_type,
                    agent_id: agentId,
                    status,
                    expires_at: expiresAt.toISOString(),
                    review_url: reviewUrl(config.baseUrl, actionUuid)
                  }
                }
              : { orgUuid, type: "action.authorized", data: { action_uuid: actionUuid, action_type: row.action_type, agent_id: agentId, policy_uuid: verdict.policy_uuid } }
          ],
          now
        )
        // Action, outbox event and the idempotency record's answer commit together, with whatever else the pipeline holds.
        yield* commit({
          inserted: [{ row }],
          events: outbox,
          idempotency: idempotencyKey === null ? [] : [{ org_uuid: orgUuid, idempotency_key: idempotencyKey, status_code: 201, response: answer }]
        })
        yield* observed(row)
        yield* announceStatus(row, status)
        if (pending) yield* announceNotification(row, "pending", status, row.approval_expires_at)
        return answer
      })
    return authorize
  })
