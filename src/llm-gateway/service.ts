/**
 * The LLM gateway's rules (CONTRACT-sdk-beyond §6), apart from the bytes: a call is authorized
 * as an action before anything is forwarded, notarized when its answer ends (with the receipt
 * id promised in the headers), and a call a crashed process left open is notarized `failed`
 * by the sweep. The transport (server.ts) streams; this decides and records.
 */

import canonicalize from "canonicalize"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type { Principal } from "../../protocol/auth.js"
import type { GatewaySettings } from "../../protocol/llm-gateway.js"
import type { ActionsError } from "../actions/errors.js"
import { Actions } from "../actions/service.js"
import { Flags } from "../flags/service.js"
import { Config } from "../platform/config.js"
import { newId } from "../platform/ids.js"
import { logLine } from "../platform/log.js"
import { detailsOf, type RequestFacts } from "./facts.js"
import type { GatewayRoute } from "./paths.js"
import type { Refusal, RefusalCode } from "./refusals.js"
import { makeGatewayStore } from "./store.js"
import type { AnswerFacts } from "./usage.js"

/** A stored body larger than this is recorded by its digest only (the authorize `details` cap). */
const MAX_STORED_DETAILS = 1_000_000
/** How long an organization's settings and an agent's status are trusted from memory. */
const CACHE_MS = 5_000
const CACHE_MAX = 10_000
/** Abandoned calls closed per sweep round. */
const SWEEP_BATCH = 500

export interface CallRequest {
  readonly route: GatewayRoute
  readonly method: string
  readonly facts: RequestFacts
  /** The request body, for `store_details`. */
  readonly body: Uint8Array
  readonly agentId: string | null
  readonly agentVersion: string | null
  readonly parentActionUuid: string | null
  /** `X-Aira-Action-Id`: run under this approved action. */
  readonly approvedActionUuid: string | null
}

/** A call that may go ahead, and the ids its answer carries. */
export interface Started {
  readonly actionUuid: string
  readonly receiptUuid: string
}

export type End = "complete" | "client_aborted" | "upstream_aborted" | "timeout"

export interface Finished {
  readonly statusCode: number | null
  readonly stream: boolean
  readonly answer: AnswerFacts | null
  readonly end: End
}

export interface LlmGatewayService {
  /** This process, as the sweep knows it. */
  readonly instance: string
  readonly enabled: (orgUuid: string) => Effect.Effect<boolean>
  readonly settings: (orgUuid: string) => Effect.Effect<GatewaySettings>
  readonly updateSettings: (orgUuid: string, storeDetails: boolean) => Effect.Effect<GatewaySettings>
  /** Authorizes the call (or takes over its approved action); a refusal says why not, in the gateway's terms. */
  readonly start: (principal: Principal, request: CallRequest) => Effect.Effect<Started, Refusal>
  /** Notarizes the call; `completed` only for a 2xx answer delivered whole. */
  readonly finish: (principal: Principal, started: Started, finished: Finished) => Effect.Effect<"minted" | "failed">
  /** Notarizes `failed` every open call whose process is gone; answers how many. */
  readonly sweep: Effect.Effect<number>
}

/** The receipt id a gateway call promises: derived from its action's id, so a sweep after a crash mints the same one. */
export const receiptUuidOf = (actionUuid: string): string => `rct_${actionUuid.slice(actionUuid.indexOf("_") + 1)}`

/** Who notarizes a call its process left open. */
const sweeper = (orgUuid: string): Principal => ({
  kind: "api_key",
  orgUuid,
  userUuid: "llm-gateway-sweep",
  email: "llm-gateway-sweep",
  role: "owner",
  scopes: ["actions:write"],
  keyId: undefined
})

const GATEWAY_CODES: ReadonlySet<string> = new Set<RefusalCode>([
  "POLICY_DENIED",
  "ENDPOINT_NOT_WHITELISTED",
  "ENDPOINT_TLS_MISMATCH",
  "AGENT_DECOMMISSIONED",
  "VALIDATION_ERROR",
  "NOT_FOUND"
])

/** An authorize refusal in the gateway's terms; its ids travel in `aira`. */
const refusalOf = (error: ActionsError): Refusal => {
  const reason = error.reason as { readonly code: string; readonly message: string; readonly details?: Record<string, unknown> | null }
  const details = reason.details ?? {}
  const text = (key: string) => (typeof details[key] === "string" ? (details[key] as string) : null)
  const code = (GATEWAY_CODES.has(reason.code) ? reason.code : reason.code.endsWith("NOT_FOUND") ? "NOT_FOUND" : "VALIDATION_ERROR") as RefusalCode
  return { code, message: reason.message, actionUuid: text("action_uuid"), policyUuid: text("policy_uuid"), receiptUuid: text("receipt_uuid") }
}

class TimedCache<A> {
  private readonly entries = new Map<string, { readonly value: A; readonly until: number }>()
  get(key: string, now: number): A | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.until > now) return entry.value
    this.entries.delete(key)
    return undefined
  }
  set(key: string, value: A, now: number): void {
    if (this.entries.size >= CACHE_MAX) this.entries.delete(this.entries.keys().next().value as string)
    this.entries.set(key, { value, until: now + CACHE_MS })
  }
  delete(key: string): void {
    this.entries.delete(key)
  }
}

export const makeLlmGateway = Effect.gen(function* () {
  const store = yield* makeGatewayStore
  const actions = yield* Actions
  const flags = yield* Flags
  const { gatewaySweepMs } = yield* Config
  const instance = newId("gwi")
  const settingsCache = new TimedCache<GatewaySettings>()
  const decommissioned = new TimedCache<boolean>()

  const settings = Effect.fn("LlmGateway.settings")(function* (orgUuid: string) {
    const now = yield* Clock.currentTimeMillis
    const cached = settingsCache.get(orgUuid, now)
    if (cached !== undefined) return cached
    const row = yield* store.settingsOf(orgUuid)
    const value: GatewaySettings = row ?? { store_details: false, updated_at: null }
    settingsCache.set(orgUuid, value, now)
    return value
  })

  const updateSettings = Effect.fn("LlmGateway.updateSettings")(function* (orgUuid: string, storeDetails: boolean) {
    const row = yield* store.putSettings(orgUuid, storeDetails)
    settingsCache.delete(orgUuid)
    return row
  })

  const agentDecommissioned = Effect.fnUntraced(function* (orgUuid: string, agentId: string) {
    const now = yield* Clock.currentTimeMillis
    const key = `${orgUuid}\n${agentId}`
    const cached = decommissioned.get(key, now)
    if (cached !== undefined) return cached
    const value = yield* store.agentDecommissioned(orgUuid, agentId)
    decommissioned.set(key, value, now)
    return value
  })

  /** A re-sent call under its approved action: same method, path and body, approved, not yet run. */
  const resume = Effect.fnUntraced(function* (principal: Principal, request: CallRequest, actionUuid: string) {
    const mismatch = (message: string): Refusal => ({ code: "ACTION_MISMATCH", message, actionUuid })
    const found = yield* store.call(principal.orgUuid, actionUuid)
    const context = found?.context ?? null
    if (found === undefined || context === null || !found.action_type.startsWith("llm.")) {
      return yield* Effect.fail(mismatch("X-Aira-Action-Id names no gateway action of this organization"))
    }
    if (context.method !== request.method || context.path !== request.route.path || context.provider !== request.route.provider || context.body_sha256 !== request.facts.bodySha256) {
      return yield* Effect.fail(mismatch("X-Aira-Action-Id names an action for another request (method, path or body differ)"))
    }
    if (found.status !== "approved") return yield* Effect.fail(mismatch(`the action is ${found.status}, not approved`))
    if (!(yield* store.claim(principal.orgUuid, actionUuid, instance))) return yield* Effect.fail(mismatch("the approved action already ran"))
    return { actionUuid, receiptUuid: receiptUuidOf(actionUuid) }
  })

  const start = Effect.fn("LlmGateway.start")(function* (principal: Principal, request: CallRequest) {
    const { route, facts } = request
    if (request.approvedActionUuid !== null) return yield* resume(principal, request, request.approvedActionUuid)
    if (request.agentId !== null && (yield* agentDecommissioned(principal.orgUuid, request.agentId))) {
      return yield* Effect.fail<Refusal>({ code: "AGENT_DECOMMISSIONED", message: `Agent ${request.agentId} is decommissioned` })
    }
    const stored = (yield* settings(principal.orgUuid)).store_details
    const bodyText = stored ? Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength).toString("utf8") : ""
    const storeBody = stored && bodyText.length <= MAX_STORED_DETAILS && bodyText.length > 0
    // What the action keeps of the call (never the text): the re-sent approved call is matched on it.
    const context = {
      provider: route.provider,
      model: facts.model,
      path: route.path,
      stream: facts.stream,
      method: request.method,
      body_sha256: facts.bodySha256
    }
    const answer: { readonly action_uuid: string; readonly status: string } = yield* actions
      .authorize(
        principal,
        {
          action_type: route.actionType,
          details: storeBody ? bodyText : detailsOf(route.provider, request.method, route.path, facts),
          store_details: storeBody,
          agent_id: request.agentId,
          agent_version: request.agentVersion,
          parent_action_uuid: request.parentActionUuid,
          model_id: facts.model === null ? null : facts.model.slice(0, 200),
          endpoint_url: route.upstreamUrl.length <= 4096 ? route.upstreamUrl : null,
          // A call the policies send to a human carries no process: nothing runs until it is re-sent.
          context: { ...context, gateway_instance: instance }
        },
        { policyContext: { ...context, content: facts.content } }
      )
      .pipe(Effect.mapError(refusalOf))
    if (answer.status === "pending_approval") {
      const policyUuid = yield* store.release(principal.orgUuid, answer.action_uuid)
      return yield* Effect.fail<Refusal>({
        code: "APPROVAL_REQUIRED",
        message: "A human must approve this call first; re-send it with X-Aira-Action-Id once approved",
        actionUuid: answer.action_uuid,
        policyUuid
      })
    }
    return { actionUuid: answer.action_uuid, receiptUuid: receiptUuidOf(answer.action_uuid) }
  })

  const outcomeOf = (finished: Finished): string =>
    canonicalize({
      status_code: finished.statusCode,
      stream: finished.stream,
      input_tokens: finished.answer?.inputTokens ?? null,
      output_tokens: finished.answer?.outputTokens ?? null,
      finish_reason: finished.answer?.finishReason ?? null,
      response_sha256: finished.answer?.responseSha256 ?? null,
      response_bytes: finished.answer?.responseBytes ?? 0,
      end: finished.end
    }) as string

  const finish = Effect.fn("LlmGateway.finish")(function* (principal: Principal, started: Started, finished: Finished) {
    const completed = finished.end === "complete" && finished.statusCode !== null && finished.statusCode >= 200 && finished.statusCode < 300
    const notarized = yield* actions
      .notarize(
        principal,
        started.actionUuid,
        { outcome: completed ? "completed" : "failed", outcome_details: outcomeOf(finished) },
        { receiptUuid: started.receiptUuid, skipOutputScan: true }
      )
      .pipe(
        Effect.map(() => "minted" as const),
        Effect.catch((error) =>
          Effect.sync(() => {
            logLine("warn", "gateway call not notarized", { action_uuid: started.actionUuid, code: (error.reason as { code?: string }).code ?? "unknown" })
            return "failed" as const
          })
        )
      )
    return notarized
  })

  const sweep = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const aliveSince = new Date(now - staleAfterMs(gatewaySweepMs)).toISOString()
    let closed = 0
    for (;;) {
      const open = yield* store.abandoned(aliveSince, SWEEP_BATCH, instance)
      for (const call of open) {
        const stream = call.context?.stream === true
        yield* finish(sweeper(call.org_uuid), { actionUuid: call.action_uuid, receiptUuid: receiptUuidOf(call.action_uuid) }, { statusCode: null, stream, answer: null, end: "timeout" })
        // A call that cannot be notarized (its agent was decommissioned) is let go rather than retried forever.
        yield* store.release(call.org_uuid, call.action_uuid)
        closed++
      }
      if (open.length < SWEEP_BATCH) break
    }
    yield* store.forgetInstances(aliveSince)
    return closed
  })

  return {
    instance,
    enabled: (orgUuid: string) => flags.isEnabled(orgUuid, "llm_gateway"),
    settings,
    updateSettings,
    start,
    finish,
    sweep
  } satisfies LlmGatewayService
})

/** Heartbeats every third of the sweep period (at most every 10 s); a process silent for three of them is gone. */
export const heartbeatMsOf = (sweepMs: number): number => Math.max(10, Math.min(10_000, Math.floor(sweepMs / 3)))
export const staleAfterMs = (sweepMs: number): number => 3 * heartbeatMsOf(sweepMs)

export class LlmGateway extends Context.Service<LlmGateway, LlmGatewayService>()("gateway/LlmGateway") {
  /** The service, its heartbeat, and the sweep at start, one stale period later, then every GATEWAY_SWEEP_MS. */
  static readonly layer = Layer.effect(LlmGateway)(
    Effect.gen(function* () {
      const gateway = yield* makeLlmGateway
      const store = yield* makeGatewayStore
      const { gatewaySweepMs } = yield* Config
      const logged = <A, E, R>(what: string, effect: Effect.Effect<A, E, R>) =>
        effect.pipe(Effect.catchCause((cause) => Effect.sync(() => logLine("error", what, { cause: String(cause) }))))
      // Heard from before it serves a call, so no other process takes its calls for abandoned.
      yield* store.heartbeat(gateway.instance)
      yield* Effect.forkScoped(Effect.repeat(logged("gateway heartbeat failed", store.heartbeat(gateway.instance)), Schedule.spaced(heartbeatMsOf(gatewaySweepMs))))
      const sweepOnce = logged(
        "gateway sweep failed",
        Effect.tap(gateway.sweep, (closed) => Effect.sync(() => closed > 0 && logLine("info", "gateway calls left open notarized failed", { closed })))
      )
      yield* Effect.forkScoped(
        Effect.gen(function* () {
          yield* sweepOnce
          yield* Effect.sleep(staleAfterMs(gatewaySweepMs))
          yield* sweepOnce
          yield* Effect.repeat(sweepOnce, Schedule.spaced(gatewaySweepMs))
        })
      )
      yield* Effect.addFinalizer(() => Effect.ignore(store.leave(gateway.instance)))
      return gateway
    })
  )
}
