/**
 * Actions: authorize an intent, notarize its outcome, human approvals (code,
 * legacy token, dashboard), expiry of pending approvals, cosignatures, legal
 * holds and parent chains.
 *
 * Every terminal transition (notarized, failed, denied_by_policy,
 * denied_by_human) mints its receipt inside the transaction that changes the
 * status; the transition runs in the agent's AgentActor (actors/agent.ts, one
 * message at a time per agent) and takes the (org, agent) chain row lock (see
 * transitions.ts); events are recorded in that same transaction and announced
 * to live channels after commit.
 */
import { createHash } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { SqlClient } from "effect/sql"
import { AgentMailbox, type TransitionResult } from "../../actors/agent.js"
import type { ActionStatus, AuthorizeRequest } from "../../protocol/actions.js"
import type { Principal } from "../../protocol/auth.js"
import { pagination } from "../../protocol/common.js"
import { badRequest, conflict, forbidden, gone, notFound, unprocessable } from "../../protocol/errors.js"
import { type DomainEvent, Events, stampEvents } from "../events/service.js"
import { Config } from "../platform/config.js"
import { newId, newUuid } from "../platform/ids.js"
import { logLine } from "../platform/log.js"
import { Secrets } from "../platform/secrets.js"
import { EndpointGuard, OutputFiltering, PolicyDecisions } from "../policies/ports.js"
import type { MintedReceipt } from "../receipts/ports.js"
import { filterOutput } from "../scan/output-filter.js"
import { approvalCodeDigest, approvalNotificationItem, checkApprovalToken, mayApprove, reviewUrl, type TokenDecision, vouchedAddresses } from "./approvals.js"
import { IDEMPOTENCY_RETENTION_MS, requestDigest, type StoredAnswer } from "./idempotency.js"
import { ApprovalsPort } from "./ports.js"
import { type ActionRow, type GrantRow, makeActionsStore } from "./store.js"
import { deniedByPolicyBody, pastDeadline } from "./transitions.js"

export const sha256Text = (text: string): string => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`

type Decision = "approve" | "deny"
type Via = "code" | "token" | "dashboard"

interface Resolution {
  readonly status: "approved" | "denied_by_human"
  readonly action_uuid: string
  readonly approver_email: string | null
}

const isTerminal = (status: string) => status === "notarized" || status === "failed" || status === "denied_by_policy" || status === "denied_by_human"

export const makeActions = Effect.gen(function* () {
    const config = yield* Config
    const secrets = yield* Secrets
    const events = yield* Events
    const policies = yield* PolicyDecisions
    const guard = yield* EndpointGuard
    const outputFiltering = yield* OutputFiltering
    const mailbox = yield* AgentMailbox
    const store = yield* makeActionsStore
    const sql = store.sql
    const ttlMs = config.approvalTtlMs

    /** SQL failures are defects (500 with a request_id); the SqlClient in scope is ours (events and minting use it). */
    const die = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      effect.pipe(
        Effect.catchTag("SqlError" as never, (error: unknown) => Effect.die(error)),
        Effect.provideService(SqlClient.SqlClient, sql)
      ) as Effect.Effect<A, Exclude<E, { _tag: "SqlError" }>, Exclude<R, SqlClient.SqlClient>>

    // The outbox insert fails only with the database: a defect, like every SQL failure here.
    const record = (list: ReadonlyArray<DomainEvent>) => Effect.orDie(events.record(list))

    const receiptView = (receipt: Omit<MintedReceipt, "signed_payload">) => ({
      receipt_uuid: receipt.receipt_uuid,
      payload_hash: receipt.payload_hash,
      signature: receipt.signature,
      public_key_id: receipt.public_key_id,
      timestamp_token: receipt.timestamp_token,
      receipt_version: receipt.receipt_version,
      verify_url: receipt.verify_url,
      created_at: receipt.created_at
    })

    const announceStatus = (row: { org_uuid: string; action_uuid: string; action_type: string; agent_id: string | null }, status: string, extra: Record<string, unknown> = {}) =>
      events.announce(row.org_uuid, "actions", {
        type: "action.status",
        action_uuid: row.action_uuid,
        action_type: row.action_type,
        agent_id: row.agent_id,
        status,
        ...extra
      })

    const announceNotification = (
      row: { org_uuid: string; action_uuid: string; action_type: string; agent_id: string | null; created_at: string },
      state: "pending" | "resolved",
      status: string,
      expiresAt: string | null = null
    ) => {
      const item = approvalNotificationItem(row, false)
      return events.announce(row.org_uuid, "notifications", {
        type: state === "pending" ? "notification.created" : "notification.resolved",
        ...(state === "pending" ? { event: "action.approval_requested" } : {}),
        id: item.id,
        notification_type: item.type,
        notification_key: item.notification_key,
        title: state === "pending" ? item.title : `Resolved: ${row.action_type}`,
        description: item.description,
        href: item.href,
        action_uuid: row.action_uuid,
        action_type: row.action_type,
        agent_id: row.agent_id,
        status,
        expires_at: expiresAt,
        review_url: reviewUrl(config.baseUrl, row.action_uuid),
        created_at: row.created_at
      })
    }

    /** Sends one terminal transition to the agent's actor; answers after its transaction committed. */
    const transition = (orgUuid: string, agentId: string | null, request: Parameters<typeof mailbox.transition>[2]) =>
      mailbox.transition(orgUuid, agentId, request)

    const receiptOf = (result: TransitionResult) => {
      if (result._tag !== "Done") return Effect.die(new Error("a receipt-minting transition was skipped"))
      return Effect.succeed(result)
    }

    // ---------------------------------------------------------------- authorize

    const replay = (answer: StoredAnswer) =>
      answer.status === 201
        ? Effect.succeed(answer.body as any)
        : Effect.fail(forbidden(String(answer.body.message ?? "A policy denied this action"), String(answer.body.code ?? "POLICY_DENIED"), (answer.body.details ?? {}) as Record<string, unknown>))

    /** Named approvers who will receive no code: neither members nor default approvers. */
    const ignoredApprovers = (orgUuid: string, named: ReadonlyArray<string>) =>
      die(
        Effect.gen(function* () {
          const vouched = vouchedAddresses(yield* store.defaultApprovers(orgUuid), yield* store.activeMembers(orgUuid))
          return [...new Set(named.map((email) => email.toLowerCase()))].filter((email) => !vouched.has(email))
        })
      )

    /** Claims the idempotency key; undefined = go ahead, otherwise the answer to give. */
    const claim = (orgUuid: string, key: string, digest: string) =>
      Effect.gen(function* () {
        for (let attempt = 0; attempt < 2; attempt++) {
          if (yield* store.claimIdempotency(orgUuid, key, digest)) return undefined
          const record = yield* store.idempotencyRecord(orgUuid, key)
          if (record === undefined) continue
          if (Date.parse(record.created_at) < Date.now() - IDEMPOTENCY_RETENTION_MS) {
            yield* store.dropStaleIdempotency(orgUuid, key, new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString())
            continue
          }
          if (record.request_hash !== digest) {
            return yield* Effect.fail(conflict("DUPLICATE_REQUEST", "This idempotency_key was already used with a different request body", { idempotency_key: key }))
          }
          if (record.response === null || record.status_code === null) {
            return yield* Effect.fail(conflict("DUPLICATE_REQUEST", "A request with this idempotency_key is still in flight", { idempotency_key: key }))
          }
          return { status: record.status_code, body: record.response } satisfies StoredAnswer
        }
        return yield* Effect.fail(conflict("DUPLICATE_REQUEST", "This idempotency_key is busy; retry", { idempotency_key: key }))
      })

    const authorize = Effect.fn("Actions.authorize")(function* (principal: Principal, input: AuthorizeRequest) {
      const orgUuid = principal.orgUuid
      const key = input.idempotency_key ?? null
      if (key !== null) {
        const previous = yield* die(claim(orgUuid, key, requestDigest(input as Record<string, unknown>)))
        if (previous !== undefined) return yield* replay(previous)
      }
      const run = authorizeFresh(principal, input, key)
      // A failure that created nothing frees the key so a corrected retry can use it.
      return yield* key === null ? run : run.pipe(Effect.onError(() => Effect.orDie(store.releaseIdempotency(orgUuid, key))))
    })

    const authorizeFresh = (principal: Principal, input: AuthorizeRequest, idempotencyKey: string | null) =>
      Effect.gen(function* () {
        const orgUuid = principal.orgUuid
        const agentId = input.agent_id ?? null
        const parentUuid = input.parent_action_uuid ?? null
        if (parentUuid !== null) {
          const parent = yield* die(store.byId(orgUuid, parentUuid))
          if (parent === undefined) return yield* Effect.fail(notFound("Parent action not found", "NOT_FOUND", { parent_action_uuid: parentUuid }))
        }
        const warnings: Array<string> = []
        if (!input.instruction_hash) warnings.push("instruction_hash was not provided: the receipt cannot commit to the agent's instructions")

        const endpointUrl = input.endpoint_url ?? null
        if (endpointUrl !== null) {
          const check = yield* guard.check(orgUuid, { url: endpointUrl, agentId })
          switch (check.outcome) {
            case "blocked":
              return yield* Effect.fail(
                forbidden("The endpoint is not on the organization's whitelist; an approval request was created", "ENDPOINT_NOT_WHITELISTED", {
                  approval_id: check.approval_id,
                  url_pattern_suggested: check.url_pattern_suggested
                })
              )
            case "tls_mismatch":
              return yield* Effect.fail(
                forbidden(check.message, "ENDPOINT_TLS_MISMATCH", { endpoint_url: endpointUrl, expected: check.expected, actual: check.actual })
              )
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
          context: input.context ?? null
        })
        warnings.push(...verdict.warnings)

        const actionUuid = newId("act")
        const createdAt = new Date().toISOString()
        const storeDetails = input.store_details === true
        const sdkEntries = Object.entries({
          system_prompt_hash: input.system_prompt_hash,
          tool_inputs_hash: input.tool_inputs_hash,
          model_params: input.model_params,
          execution_env: input.execution_env
        }).filter(([, value]) => value !== undefined && value !== null)
        const status: "authorized" | "pending_approval" | "denied_by_policy" =
          verdict.decision === "deny" ? "denied_by_policy" : verdict.decision === "require_approval" || input.require_approval === true ? "pending_approval" : "authorized"

        const pending = status === "pending_approval"
        const expiresAt = pending ? new Date(Date.now() + ttlMs) : null
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

        const row = {
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
          status,
          policy_uuid: verdict.policy_uuid,
          require_approval: input.require_approval === true,
          approvers: input.approvers ? [...new Set(input.approvers.map((email) => email.toLowerCase()))] : null,
          context: (input.context ?? null) as Record<string, unknown> | null,
          sdk: sdkEntries.length > 0 ? Object.fromEntries(sdkEntries) : null,
          warnings,
          approval_expires_at: expiresAt?.toISOString() ?? null,
          created_at: createdAt
        } as const

        if (status === "denied_by_policy") {
          const result = yield* transition(orgUuid, agentId, {
            _tag: "DenyByPolicy",
            row: row as unknown as Record<string, unknown>,
            reasoning: verdict.reasoning,
            policy_uuid: verdict.policy_uuid,
            idempotency_key: idempotencyKey
          }).pipe(Effect.flatMap(receiptOf))
          const denied = deniedByPolicyBody(actionUuid, verdict.policy_uuid, verdict.reasoning, result.receipt.receipt_uuid)
          yield* announceStatus(row, "denied_by_policy", { receipt_uuid: denied.details.receipt_uuid })
          return yield* Effect.fail(forbidden(denied.message, denied.code, denied.details))
        }

        const answer = {
          action_uuid: actionUuid,
          status: status as "authorized" | "pending_approval",
          created_at: createdAt,
          warnings: warnings.length > 0 ? warnings : null
        }
        // The event names the action and where to review it; approval secrets go to approvers by e-mail only.
        const outbox = stampEvents([
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
        ])
        // Action and outbox event are one atomic statement; only an idempotency key needs a transaction around it.
        const write = store.insertWithEvents(row, outbox)
        yield* die(
          idempotencyKey === null
            ? write
            : sql.withTransaction(Effect.andThen(write, store.completeIdempotency(orgUuid, idempotencyKey, 201, answer)))
        )
        yield* announceStatus(row, status)
        if (pending) yield* announceNotification(row, "pending", status, row.approval_expires_at)
        return answer
      })

    // ---------------------------------------------------------------- notarize

    const notarize = Effect.fn("Actions.notarize")(function* (
      principal: Principal,
      actionUuid: string,
      input: { outcome?: string | null; outcome_details?: string | null }
    ) {
      const outcome = input.outcome ?? "completed"
      if (outcome !== "completed" && outcome !== "failed") {
        return yield* Effect.fail(badRequest("INVALID_OUTCOME", "outcome must be completed or failed", { outcome }))
      }
      const orgUuid = principal.orgUuid
      const current = yield* die(store.byId(orgUuid, actionUuid))
      if (current === undefined) return yield* Effect.fail(notFound("Action not found"))
      if (current.status !== "authorized" && current.status !== "approved") {
        return yield* Effect.fail(conflict("INVALID_ACTION_STATE", `Action is ${current.status}; only authorized or approved actions can be notarized`, { status: current.status }))
      }
      const details = input.outcome_details ?? null
      let outcomeHash: string | null = null
      let flags: ReadonlyArray<Record<string, unknown>> | null = null
      const warnings: Array<string> = []
      if (details !== null) {
        const policy = yield* outputFiltering.policyFor(orgUuid)
        const filtered = filterOutput(details, policy)
        if (filtered.denied) {
          return yield* Effect.fail(
            unprocessable("OUTPUT_SCAN_VIOLATION", "outcome_details contains content the output policy refuses", {
              action_uuid: actionUuid,
              flags: filtered.flags
            })
          )
        }
        flags = filtered.flags.length > 0 ? filtered.flags.map((flag) => ({ ...flag })) : null
        outcomeHash = sha256Text(filtered.redacted_text ?? details)
        if (filtered.redacted_text !== undefined && filtered.redacted_text !== details) warnings.push("outcome_details were redacted before hashing")
        if (filtered.flags.length > 0) warnings.push(`output scan flagged ${filtered.flags.map((flag) => flag.entity_type).join(", ")}`)
      }
      const status = outcome === "completed" ? "notarized" : "failed"
      const done = yield* transition(orgUuid, current.agent_id, {
        _tag: "Notarize",
        action_uuid: actionUuid,
        outcome,
        outcome_hash: outcomeHash,
        output_scan_flags: flags
      }).pipe(Effect.flatMap(receiptOf))
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
        warnings: warnings.length > 0 ? warnings : null
      }
    })

    // ---------------------------------------------------------------- human decisions

    /** Expires one pending approval if it is (still) past its deadline; the row it left, or undefined when nothing changed. */
    const expireOne = (item: { readonly orgUuid: string; readonly agentId: string | null; readonly actionUuid: string }) => {
      const at = new Date().toISOString()
      return transition(item.orgUuid, item.agentId, { _tag: "Expire", action_uuid: item.actionUuid, at }).pipe(
        Effect.map((result) => (result._tag === "Done" ? result.action : undefined)),
        // Skipped: someone resolved it first; any other failure here is a defect of the sweep.
        Effect.orDie,
        Effect.tap((row) =>
          row === undefined
            ? Effect.void
            : Effect.andThen(announceStatus(row, "denied_by_human", { reason: "expired" }), announceNotification(row, "resolved", "denied_by_human"))
        )
      )
    }

    /**
     * Approves or denies a pending action. A decision by code or token spends
     * the approver's grant in the same transaction (single use).
     */
    const decide = (row: ActionRow, decision: Decision, by: string | null, via: Via, reason: string | null, grantId: string | null) =>
      Effect.gen(function* () {
        const at = new Date().toISOString()
        const resolved = (status: string) => conflict("ALREADY_RESOLVED", `Action is ${status}, no longer pending approval`, { status })
        if (decision === "approve") {
          yield* die(
            sql.withTransaction(
              Effect.gen(function* () {
                const locked = yield* store.byId(row.org_uuid, row.action_uuid, true)
                if (locked === undefined) return yield* Effect.fail(notFound("Action not found"))
                if (locked.status !== "pending_approval" || pastDeadline(locked)) {
                  return yield* Effect.fail(grantId !== null ? gone("CODE_EXPIRED", "This approval is no longer valid") : resolved(pastDeadline(locked) ? "denied_by_human" : locked.status))
                }
                if (grantId !== null && !(yield* store.useGrant(grantId))) return yield* Effect.fail(gone("CODE_EXPIRED", "This approval credential was already used"))
                yield* store.approve(row.action_uuid, by, via, at)
                yield* record([
                  {
                    orgUuid: row.org_uuid,
                    type: "action.approved",
                    data: { action_uuid: row.action_uuid, action_type: row.action_type, agent_id: row.agent_id, approved_by: by, via, approved_at: at }
                  }
                ])
              })
            )
          )
          yield* announceStatus(row, "approved", { approved_by: by })
          yield* announceNotification(row, "resolved", "approved")
          return { status: "approved", action_uuid: row.action_uuid, approver_email: by } satisfies Resolution
        }
        yield* transition(row.org_uuid, row.agent_id, { _tag: "Deny", action_uuid: row.action_uuid, by, at, via, reason, grant_id: grantId })
        yield* announceStatus(row, "denied_by_human", { denied_by: by })
        yield* announceNotification(row, "resolved", "denied_by_human")
        return { status: "denied_by_human", action_uuid: row.action_uuid, approver_email: by } satisfies Resolution
      }).pipe(
        // A decision that lost the race against the deadline leaves the action expired, never pending past it.
        Effect.tapError(() => expireOne({ orgUuid: row.org_uuid, agentId: row.agent_id, actionUuid: row.action_uuid }))
      )

    /** A grant's holder must still be someone the organization vouches for (a member who left is not). */
    const stillVouched = (grant: GrantRow) =>
      die(
        Effect.gen(function* () {
          const vouched = vouchedAddresses(yield* store.defaultApprovers(grant.org_uuid), yield* store.activeMembers(grant.org_uuid))
          if (!vouched.has(grant.approver_email)) return yield* Effect.fail(forbidden("This approver is no longer an approver of the organization"))
        })
      )

    /** The pending action a code grants a decision on, with the grant; fails as the code routes answer. */
    const liveCode = (code: string) =>
      Effect.gen(function* () {
        const grant = yield* die(store.grantByCodeDigest(approvalCodeDigest(secrets.tokenKey, code)))
        const row = grant === undefined ? undefined : yield* die(store.byId(grant.org_uuid, grant.action_uuid))
        if (grant === undefined || row === undefined) return yield* Effect.fail(notFound("Approval code not found"))
        const expired = pastDeadline(row)
        if (expired) yield* expireOne({ orgUuid: row.org_uuid, agentId: row.agent_id, actionUuid: row.action_uuid })
        if (grant.used_at !== null || row.status !== "pending_approval" || expired) {
          return yield* Effect.fail(gone("CODE_EXPIRED", "This approval code was already used or has expired"))
        }
        return { grant, row }
      })

    const review = Effect.fn("Actions.review")(function* (code: string) {
      const { row } = yield* liveCode(code)
      let details: string | null = null
      if (row.details_sealed !== null) {
        details = yield* Effect.try({
          try: () => secrets.envelope.openText(row.details_sealed!, `action-details:${row.action_uuid}`),
          catch: (cause) => cause
        }).pipe(Effect.orDie)
      }
      return {
        action_uuid: row.action_uuid,
        action_type: row.action_type,
        agent_id: row.agent_id,
        status: row.status,
        details,
        action_details_hash: row.action_details_hash,
        instruction_hash: row.instruction_hash,
        created_at: row.created_at,
        expires_at: row.approval_expires_at ?? row.created_at
      }
    })

    const auditDecision = (row: ActionRow, actor: string, decision: Decision, via: Via, requestId: string) =>
      die(store.audit({ orgUuid: row.org_uuid, actor, event: `action.${decision === "approve" ? "approved" : "denied"}`, target: row.action_uuid, details: { via }, requestId }))

    const confirm = Effect.fn("Actions.confirm")(function* (code: string, decision: Decision, reason: string | null, requestId: string) {
      const { grant, row } = yield* liveCode(code)
      yield* stillVouched(grant)
      const result = yield* decide(row, decision, grant.approver_email, "code", decision === "deny" ? reason : null, grant.grant_id)
      yield* auditDecision(row, grant.approver_email, decision, "code", requestId)
      return result
    })

    const byToken = Effect.fn("Actions.byToken")(function* (actionUuid: string, decision: TokenDecision, token: string | undefined, reason: string | null, requestId: string) {
      const check = checkApprovalToken(secrets.tokenKey, actionUuid, decision, token)
      if (check.result === "invalid") return yield* Effect.fail(forbidden("The approval token does not match this action"))
      const grant = yield* die(store.grantById(check.grantId))
      const row = grant === undefined ? undefined : yield* die(store.byId(grant.org_uuid, actionUuid))
      if (grant === undefined || row === undefined) return yield* Effect.fail(notFound("Action not found"))
      if (row.status !== "pending_approval") return yield* Effect.fail(conflict("ALREADY_RESOLVED", `Action is ${row.status}, no longer pending approval`, { status: row.status }))
      if (check.result === "expired" || pastDeadline(row)) {
        yield* expireOne({ orgUuid: row.org_uuid, agentId: row.agent_id, actionUuid: row.action_uuid })
        return yield* Effect.fail(gone("CODE_EXPIRED", "The approval token has expired"))
      }
      yield* stillVouched(grant)
      const result = yield* decide(row, decision, grant.approver_email, "token", decision === "deny" ? reason : null, grant.grant_id)
      yield* auditDecision(row, grant.approver_email, decision, "token", requestId)
      return result
    })

    const fromDashboard = Effect.fn("Actions.fromDashboard")(function* (principal: Principal, actionUuid: string, decision: Decision, requestId: string) {
      const row = yield* die(store.byId(principal.orgUuid, actionUuid))
      if (row === undefined) return yield* Effect.fail(notFound("Action not found"))
      const defaults = yield* die(store.defaultApprovers(principal.orgUuid))
      if (!mayApprove(principal, row.approvers, defaults)) {
        return yield* Effect.fail(forbidden("You are not an approver of this action"))
      }
      if (row.status !== "pending_approval") return yield* Effect.fail(conflict("ALREADY_RESOLVED", `Action is ${row.status}, no longer pending approval`, { status: row.status }))
      if (pastDeadline(row)) {
        yield* expireOne({ orgUuid: row.org_uuid, agentId: row.agent_id, actionUuid: row.action_uuid })
        return yield* Effect.fail(conflict("ALREADY_RESOLVED", "The approval expired", { status: "denied_by_human", reason: "expired" }))
      }
      const result = yield* decide(row, decision, principal.email, "dashboard", null, null)
      yield* auditDecision(row, principal.email, decision, "dashboard", requestId)
      return result
    })

    // ---------------------------------------------------------------- expiry

    /** Turns every pending approval past its deadline into denied_by_human ("expired"). Returns how many. */
    const expireDue = Effect.fn("Actions.expireDue")(function* () {
      let expired = 0
      for (;;) {
        const due = yield* die(store.expired(100))
        if (due.length === 0) return expired
        let progressed = 0
        for (const item of due) {
          const outcome = yield* expireOne(item)
          if (outcome !== undefined) {
            expired++
            progressed++
          }
        }
        if (progressed === 0) return expired
      }
    })

    // ---------------------------------------------------------------- reads and the rest

    const get = Effect.fn("Actions.get")(function* (principal: Principal, actionUuid: string) {
      const row = yield* die(store.byId(principal.orgUuid, actionUuid))
      if (row === undefined) return yield* Effect.fail(notFound("Action not found"))
      const authorizations = yield* die(store.cosignatures(principal.orgUuid, actionUuid))
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
        receipt: row.receipt ? receiptView(row.receipt) : null,
        authorizations
      }
    })

    const list = Effect.fn("Actions.list")(function* (
      principal: Principal,
      filter: { action_type?: string; agent_id?: string; status?: ActionStatus },
      page: number,
      perPage: number
    ) {
      const [rows, total] = yield* die(store.list(principal.orgUuid, filter, page, perPage))
      return { data: rows, actions: rows, pagination: pagination(page, perPage, total) }
    })

    const cosign = Effect.fn("Actions.cosign")(function* (principal: Principal, actionUuid: string, requestId: string) {
      const row = yield* die(store.byId(principal.orgUuid, actionUuid))
      if (row === undefined) return yield* Effect.fail(notFound("Action not found"))
      const created = yield* die(
        store.cosign({ cosignature_uuid: newUuid(), org_uuid: principal.orgUuid, action_uuid: actionUuid, user_uuid: principal.userUuid, email: principal.email })
      )
      if (created === undefined) return yield* Effect.fail(conflict("ALREADY_AUTHORIZED", "You already cosigned this action", { action_uuid: actionUuid }))
      yield* die(store.audit({ orgUuid: principal.orgUuid, actor: principal.email, event: "action.cosigned", target: actionUuid, details: { cosignature_uuid: created.cosignature_uuid }, requestId }))
      return created
    })

    const setHold = Effect.fn("Actions.setHold")(function* (principal: Principal, actionUuid: string, hold: boolean, requestId: string) {
      const found = yield* die(
        sql.withTransaction(
          Effect.gen(function* () {
            const updated = yield* store.setHold(principal.orgUuid, actionUuid, hold)
            if (updated) {
              yield* store.audit({
                orgUuid: principal.orgUuid,
                actor: principal.email,
                event: hold ? "action.legal_hold.placed" : "action.legal_hold.released",
                target: actionUuid,
                requestId
              })
            }
            return updated
          })
        )
      )
      if (!found) return yield* Effect.fail(notFound("Action not found"))
      return { action_uuid: actionUuid, legal_hold: hold }
    })

    const chain = Effect.fn("Actions.chain")(function* (principal: Principal, actionUuid: string) {
      const links = yield* die(store.chain(principal.orgUuid, actionUuid, 1000))
      if (links.length === 0) return yield* Effect.fail(notFound("Action not found"))
      return { action_uuid: actionUuid, chain: links }
    })

    return {
      authorize,
      notarize,
      get,
      list,
      review,
      confirm,
      byToken,
      fromDashboard,
      cosign,
      setHold,
      chain,
      expireDue,
      pending: (orgUuid: string, limit: number) => Effect.orDie(store.pending(orgUuid, limit)),
      // Suspended so every sweep computes its own cut-off.
      pruneIdempotency: Effect.suspend(() => Effect.orDie(store.pruneIdempotency(new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString()))),
      isTerminal
    }
  })

export class Actions extends Context.Service<Actions, Effect.Success<typeof makeActions>>()("gateway/Actions") {
  /** The service, plus the background sweep that expires pending approvals (and prunes idempotency records). */
  static readonly layer = Layer.effect(Actions)(
      Effect.gen(function* () {
        const actions = yield* makeActions
        const { approvalSweepMs } = yield* Config
        const sweep = Effect.gen(function* () {
          yield* actions.expireDue()
          yield* actions.pruneIdempotency
        }).pipe(
          Effect.catchCause((cause) => Effect.sync(() => logLine("error", "action expiry sweep failed", { cause: String(cause) })))
        )
        yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(approvalSweepMs)))
        return actions
      })
    )

  /** Actions and the ApprovalsPort together, as app.ts wires them. */
  static get live() {
    return Layer.provideMerge(Actions.approvalsLayer, Actions.layer)
  }

  /** The ApprovalsPort other areas (notifications, the approval page) consume. */
  static readonly approvalsLayer = Layer.effect(ApprovalsPort)(
    Effect.gen(function* () {
      const actions = yield* Actions
      return ApprovalsPort.of({
        pending: (orgUuid, limit) => actions.pending(orgUuid, limit),
        review: (code) => actions.review(code),
        confirm: (code, decision, reason, requestId) => actions.confirm(code, decision, reason ?? null, requestId)
      })
    })
  )
}
