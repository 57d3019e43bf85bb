/**
 * Policies: validation, CRUD and lifecycle, dry-run, and the PolicyDecisions
 * port the actions flow calls (evaluated from the org's cached snapshot).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { listPage, type Pagination } from "../../protocol/common.js"
import { InvalidInput } from "../../protocol/errors.js"
import { isKnownModel } from "../../protocol/models.js"
import type { CreatePolicyRequest, DryRunRequest, PolicySummary, PolicyView, UpdatePolicyRequest } from "../../protocol/policies.js"
import { ModelCalls } from "../models/calls.js"
import { auditActor } from "../platform/audit.js"
import { newId } from "../platform/ids.js"
import { isJudged, type Judgement, type ModelVote, makeAiJudge } from "./ai-judge.js"
import { compileConditions } from "./conditions.js"
import { compileScanConfig } from "./content-scan.js"
import {
  AlreadyActive,
  ConditionsRequired,
  InvalidRegex,
  ModeLocked,
  ModelsRequired,
  NotActive,
  type PoliciesError,
  PolicyActive,
  PolicyNotFound,
  PolicyTextRequired,
  refuse,
  UnknownMode,
  UnknownModel
} from "./errors.js"
import { combineDecisions, defaultEvaluators, dryRun, inScope, type PolicyEvaluator, type PolicyEvaluators } from "./evaluate.js"
import { type ActionSubject, PolicyDecisions } from "./ports.js"
import { encodeEvaluations } from "./recorded.js"
import { PolicySnapshots, toEvaluable } from "./snapshot.js"
import { makePoliciesStore, type PolicyFields, type PolicyRow, type StoredScope } from "./store.js"
import { type EvaluablePolicy, POLICY_MODES, type PolicyMode } from "./types.js"

export interface AuditContext {
  readonly requestId: string | null
}

type Draft = {
  readonly name: string
  readonly description?: string | null | undefined
  readonly mode: string
  readonly decision: PolicyFields["decision"]
  readonly priority?: number | undefined
  readonly conditions?: unknown
  readonly ai_prompt?: string | null | undefined
  readonly ai_models?: ReadonlyArray<string> | null | undefined
  readonly scan_config?: unknown
  readonly scope?: { readonly agent_ids?: ReadonlyArray<string> | null; readonly action_types?: ReadonlyArray<string> | null } | null | undefined
}

const normalizeScope = (scope: Draft["scope"]): StoredScope => ({
  agent_ids: [...new Set(scope?.agent_ids ?? [])],
  action_types: [...new Set(scope?.action_types ?? [])]
})

/** The spec's 400 codes first, then shapes (422); returns the fields to store. */
export const validatePolicy = (draft: Draft, isKnown: (model: string) => Effect.Effect<boolean> = (model) => Effect.succeed(isKnownModel(model))) =>
  Effect.gen(function* () {
    const fields = yield* validateShape(draft)
    if (fields.ai_models !== null) {
      const unknown: Array<string> = []
      for (const model of fields.ai_models) if (!(yield* isKnown(model))) unknown.push(model)
      if (unknown.length > 0) return yield* refuse(UnknownModel.of(unknown))
    }
    return fields
  })

const validateShape = (draft: Draft) => {
  if (!POLICY_MODES.includes(draft.mode as PolicyMode)) {
    return refuse(UnknownMode.of(draft.mode, POLICY_MODES))
  }
  const mode = draft.mode as PolicyMode
  let conditions: unknown = draft.conditions ?? null
  let scanConfig: unknown = null
  let aiPrompt: string | null = null
  let aiModels: ReadonlyArray<string> | null = null
  if (mode === "rules" || draft.conditions !== undefined) {
    const compiled = compileConditions(draft.conditions, { required: mode === "rules" })
    if (!compiled.ok) {
      if (compiled.code === "CONDITIONS_REQUIRED") return refuse(new ConditionsRequired({ message: compiled.message }))
      return refuse(compiled.code === "INVALID_REGEX" ? InvalidRegex.of(compiled.issues) : InvalidInput.of(compiled.issues))
    }
    // Stored as given (detail output returns `conditions` as it was sent).
    conditions = draft.conditions ?? null
  }
  if (mode === "content_scan") {
    const compiled = compileScanConfig(draft.scan_config)
    if (!compiled.ok) {
      return refuse(compiled.code === "INVALID_REGEX" ? InvalidRegex.of(compiled.issues) : InvalidInput.of(compiled.issues))
    }
    scanConfig = draft.scan_config ?? null
  }
  if (mode === "ai" || mode === "consensus") {
    const prompt = draft.ai_prompt?.trim() ?? ""
    if (prompt === "") return refuse(PolicyTextRequired.of(mode))
    const models = [...new Set(draft.ai_models ?? [])]
    // One model for ai, two or more for consensus (spec 000).
    if (mode === "ai" ? models.length !== 1 : models.length < 2) return refuse(ModelsRequired.of(mode))
    aiPrompt = draft.ai_prompt ?? null
    aiModels = models
  }
  const fields: PolicyFields = {
    name: draft.name,
    description: draft.description ?? null,
    mode,
    decision: draft.decision,
    priority: draft.priority ?? 0,
    conditions,
    ai_prompt: aiPrompt,
    ai_models: aiModels,
    scan_config: scanConfig,
    scope: normalizeScope(draft.scope)
  }
  return Effect.succeed(fields)
}

export const policyView = (row: PolicyRow, pending?: { readonly n: number; readonly at: string }): PolicyView => ({
  id: row.id,
  policy_uuid: row.id,
  name: row.name,
  description: row.description,
  mode: row.mode,
  decision: row.decision,
  priority: row.priority,
  conditions: row.conditions,
  ai_prompt: row.ai_prompt,
  policy_text: row.ai_prompt,
  ai_models: row.ai_models === null ? null : [...row.ai_models],
  models: row.ai_models === null ? null : [...row.ai_models],
  scan_config: row.scan_config,
  scope: { agent_ids: [...row.scope.agent_ids], action_types: [...row.scope.action_types] },
  status: row.status,
  active: row.status === "active",
  evaluation_count: row.evaluation_count + (pending?.n ?? 0),
  last_evaluated_at:
    pending && (row.last_evaluated_at === null || pending.at > row.last_evaluated_at) ? pending.at : row.last_evaluated_at,
  activated_at: row.activated_at,
  deactivated_at: row.deactivated_at,
  created_at: row.created_at,
  updated_at: row.updated_at
})


/** What a dry run answers: the policy's decision on the action, recording nothing. */
export interface DryRunResult {
  readonly policy_uuid: string
  readonly policy_name: string
  readonly decision: string
  readonly reasoning: string
  readonly confidence: number
  readonly model_votes?: ReadonlyArray<ModelVote> | null
  readonly dry_run: boolean
}

export interface PoliciesService {
  readonly create: (principal: Principal, input: CreatePolicyRequest, context: AuditContext) => Effect.Effect<PolicyView, PoliciesError>
  readonly list: (
    principal: Principal,
    query: { page?: number; per_page?: number; mode?: string; status?: string }
  ) => Effect.Effect<{ data: Array<PolicySummary>; policies: Array<PolicySummary>; pagination: Pagination }>
  readonly get: (principal: Principal, id: string) => Effect.Effect<PolicyView, PoliciesError>
  readonly update: (principal: Principal, id: string, patch: UpdatePolicyRequest, context: AuditContext) => Effect.Effect<PolicyView, PoliciesError>
  readonly remove: (principal: Principal, id: string, context: AuditContext) => Effect.Effect<{ id: string; deleted: boolean }, PoliciesError>
  readonly activate: (principal: Principal, id: string, context: AuditContext) => Effect.Effect<{ id: string; status: string; activated_at: string }, PoliciesError>
  readonly deactivate: (
    principal: Principal,
    id: string,
    context: AuditContext
  ) => Effect.Effect<{ id: string; status: string; deactivated_at: string }, PoliciesError>
  /** Evaluates one policy, whatever its status; records nothing. */
  readonly dryRun: (principal: Principal, id: string, input: DryRunRequest) => Effect.Effect<DryRunResult, PoliciesError>
}

export const makePolicies = Effect.gen(function* () {
  const store = yield* makePoliciesStore
  const snapshots = yield* PolicySnapshots
  const judge = yield* makeAiJudge
  const calls = yield* ModelCalls
  /** Built-in models and the organization's own `custom:` models. */
  const isKnown = (principal: Principal) => (model: string) => calls.isKnown(principal.orgUuid, model)

  const load = (orgUuid: string, id: string) =>
    Effect.flatMap(store.find(orgUuid, id), (row) => (row ? Effect.succeed(row) : refuse(PolicyNotFound.of(id))))

  const audit = (principal: Principal, event: string, id: string, context: AuditContext, details?: Record<string, unknown>) =>
    store.audit({ orgUuid: principal.orgUuid, actor: auditActor(principal), event, target: id, details, requestId: context.requestId })

  const create = Effect.fn("Policies.create")(function* (principal: Principal, input: CreatePolicyRequest, context: AuditContext) {
    const fields = yield* validatePolicy(
      {
        ...input,
        ai_prompt: input.ai_prompt ?? input.policy_text,
        ai_models: input.ai_models ?? input.models
      },
      isKnown(principal)
    )
    const status = input.activate === true ? "active" : "draft"
    const row = yield* store.insert(newId("pol"), principal.orgUuid, fields, status)
    yield* audit(principal, "policy.created", row.id, context, { status })
    if (status === "active") yield* snapshots.invalidate(principal.orgUuid)
    return policyView(row)
  })

  const list = Effect.fn("Policies.list")(function* (principal: Principal, query: { page?: number; per_page?: number; mode?: string; status?: string }) {
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    const { rows, total } = yield* store.list(principal.orgUuid, { mode: query.mode, status: query.status }, page, perPage)
    const items = rows.map(
      (row): PolicySummary => ({
        id: row.id,
        name: row.name,
        mode: row.mode,
        decision: row.decision,
        priority: row.priority,
        status: row.status,
        active: row.status === "active",
        created_at: row.created_at
      })
    )
    return listPage(items, { page, perPage, total }, "policies")
  })

  const get = Effect.fn("Policies.get")(function* (principal: Principal, id: string) {
    const row = yield* load(principal.orgUuid, id)
    return policyView(row, snapshots.pending(row.id))
  })

  const update = Effect.fn("Policies.update")(function* (principal: Principal, id: string, patch: UpdatePolicyRequest, context: AuditContext) {
    const current = yield* load(principal.orgUuid, id)
    if (patch.mode !== undefined && patch.mode !== current.mode) {
      return yield* refuse(ModeLocked.of(patch.mode))
    }
    const fields = yield* validatePolicy(
      {
        name: patch.name ?? current.name,
        description: patch.description !== undefined ? patch.description : current.description,
        mode: current.mode,
        decision: patch.decision ?? current.decision,
        priority: patch.priority ?? current.priority,
        conditions: patch.conditions !== undefined ? patch.conditions : (current.conditions ?? undefined),
        ai_prompt: patch.ai_prompt ?? patch.policy_text ?? current.ai_prompt,
        ai_models: patch.ai_models ?? patch.models ?? current.ai_models,
        scan_config: patch.scan_config !== undefined ? patch.scan_config : (current.scan_config ?? undefined),
        scope:
          patch.scope !== undefined
            ? { agent_ids: patch.scope?.agent_ids ?? current.scope.agent_ids, action_types: patch.scope?.action_types ?? current.scope.action_types }
            : current.scope
      },
      isKnown(principal)
    )
    const row = yield* store.update(principal.orgUuid, id, fields)
    if (row === undefined) return yield* refuse(PolicyNotFound.of(id))
    yield* audit(principal, "policy.updated", id, context, { fields: Object.keys(patch) })
    // Active policies change immediately: every process drops its snapshot.
    if (row.status === "active") yield* snapshots.invalidate(principal.orgUuid)
    return policyView(row, snapshots.pending(row.id))
  })

  const remove = Effect.fn("Policies.remove")(function* (principal: Principal, id: string, context: AuditContext) {
    const current = yield* load(principal.orgUuid, id)
    // Checked again by the DELETE: an activation may land in between.
    const deleted = current.status !== "active" && (yield* store.removeInactive(principal.orgUuid, id))
    if (!deleted) return yield* refuse(PolicyActive.of(id))
    yield* audit(principal, "policy.deleted", id, context)
    return { id, deleted: true }
  })

  const activate = Effect.fn("Policies.activate")(function* (principal: Principal, id: string, context: AuditContext) {
    yield* load(principal.orgUuid, id)
    const row = yield* store.transition(principal.orgUuid, id, ["draft", "inactive"], "active")
    if (row === undefined) return yield* refuse(AlreadyActive.of(id))
    yield* audit(principal, "policy.activated", id, context)
    yield* snapshots.invalidate(principal.orgUuid)
    return { id, status: row.status, activated_at: row.activated_at ?? row.updated_at }
  })

  const deactivate = Effect.fn("Policies.deactivate")(function* (principal: Principal, id: string, context: AuditContext) {
    yield* load(principal.orgUuid, id)
    const row = yield* store.transition(principal.orgUuid, id, ["active"], "inactive")
    if (row === undefined) return yield* refuse(NotActive.of(id))
    yield* audit(principal, "policy.deactivated", id, context)
    yield* snapshots.invalidate(principal.orgUuid)
    return { id, status: row.status, deactivated_at: row.deactivated_at ?? row.updated_at }
  })

  const dryRunPolicy = Effect.fn("Policies.dryRun")(function* (principal: Principal, id: string, input: DryRunRequest) {
    const row = yield* load(principal.orgUuid, id)
    const policy = toEvaluable(row)
    const subject = {
      action_type: input.action_type,
      details: input.details,
      agent_id: input.agent_id ?? null,
      model_id: input.model_id ?? null,
      agent_version: input.agent_version ?? null,
      model_version: input.model_version ?? null,
      endpoint_url: input.endpoint_url ?? null,
      instruction_hash: input.instruction_hash ?? null,
      context: input.context ?? null
    }
    if (!isJudged(policy) || !inScope(policy, subject)) {
      return { policy_uuid: row.id, policy_name: row.name, ...dryRun(policy, subject), dry_run: true } satisfies DryRunResult as DryRunResult
    }
    const judgement = yield* judge.judge(principal.orgUuid, policy, subject)
    const result = dryRun(policy, subject, judgedEvaluators(new Map([[policy.id, judgement]])))
    return {
      policy_uuid: row.id,
      policy_name: row.name,
      ...result,
      confidence: judgement.confidence,
      model_votes: judgement.votes.length > 1 ? judgement.votes : null,
      dry_run: true
    } satisfies DryRunResult as DryRunResult
  })

  return Policies.of({ create, list, get, update, remove, activate, deactivate, dryRun: dryRunPolicy })
})

export class Policies extends Context.Service<Policies, PoliciesService>()("gateway/Policies") {
  static readonly layer = Layer.effect(Policies, makePolicies)
}

/** The PolicyDecisions port: the org's snapshot through combineDecisions; counts are batched. */
export const PolicyDecisionsLive = Layer.effect(
  PolicyDecisions,
  Effect.gen(function* () {
    const snapshots = yield* PolicySnapshots
    const judge = yield* makeAiJudge
    const decide = (policies: ReadonlyArray<EvaluablePolicy>, subject: ActionSubject, evaluators: PolicyEvaluators, judgements?: ReadonlyMap<string, Judgement>) => {
      const combined = combineDecisions(policies, subject, evaluators)
      snapshots.recordEvaluations(combined.evaluated)
      return {
        decision: combined.decision,
        policy_uuid: combined.policy_uuid,
        reasoning: combined.reasoning,
        warnings: combined.warnings,
        evaluations: encodeEvaluations(combined.trace, judgements, new Date().toISOString())
      }
    }
    return {
      evaluate: (orgUuid, subject) =>
        Effect.flatMap(snapshots.get(orgUuid), (snapshot) => {
          // Rules and scans only (the common case): no model call, no extra work.
          if (!snapshot.policies.some(isJudged)) return Effect.succeed(decide(snapshot.policies, subject, defaultEvaluators))
          const judged = snapshot.policies.filter((policy) => isJudged(policy) && (policy.status === undefined || policy.status === "active") && inScope(policy, subject))
          return Effect.map(judge.judgeAll(orgUuid, judged, subject), (judgements) => decide(snapshot.policies, subject, judgedEvaluators(judgements), judgements))
        })
    }
  })
)

/** The ai and consensus evaluators answer what the judge found (a policy it did not judge fails closed). */
const judgedEvaluators = (judgements: ReadonlyMap<string, Judgement>): PolicyEvaluators => {
  const read: PolicyEvaluator = (policy) =>
    judgements.get(policy.id)?.match ?? { kind: "unavailable", warning: `AI policy ${policy.name} was not evaluated; human approval required` }
  return { ...defaultEvaluators, ai: read, consensus: read }
}

/** Snapshots, the CRUD service and the decisions port; needs SqlClient and Fanout. */
export const policiesLayer = Layer.mergeAll(Policies.layer, PolicyDecisionsLive).pipe(Layer.provideMerge(PolicySnapshots.layer))
