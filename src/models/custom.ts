/**
 * Custom models: an organization's own OpenAI-compatible endpoints. The Authorization value is
 * sealed with the envelope under `custom-model:{org}:{id}` and never answered (`has_auth`);
 * `/test` asks the model the probe question and reports failures inside its answer.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { Principal } from "../../protocol/auth.js"
import type { CustomModel, CustomModelPatch, CustomModelTest, NewCustomModel } from "../../protocol/models.js"
import { auditActor, insertAudit } from "../platform/audit.js"
import { Config } from "../platform/config.js"
import { InvalidInput, type Issue } from "../platform/domain-error.js"
import { newId } from "../platform/ids.js"
import { Outbound } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { ModelCalls } from "./calls.js"
import { checkAuth, checkEndpoint, checkModelId, checkName, checkRequestSchema, checkResponseSchema, checkTimeout } from "./custom-fields.js"
import { type CustomModelRow, makeCustomModelsStore } from "./custom-store.js"
import { CustomModelNotFound, ModelIdExists, type ModelsError, refuse } from "./errors.js"

const PROBE_SYSTEM = "You check that a model endpoint answers in the expected format. Answer only with the JSON object asked for."
const PROBE_PROMPT =
  'Action to review: "send a weekly summary e-mail to the team". Decide APPROVE, DENY or REVIEW and answer as JSON {"decision", "confidence" (0-1), "key_factors" (strings), "reasoning"}.'

export const sealedAuthFor = (orgUuid: string, id: string) => `custom-model:${orgUuid}:${id}`

export const customModelView = (row: CustomModelRow): CustomModel => ({
  id: row.id,
  name: row.name,
  model_id: row.model_id,
  endpoint_url: row.endpoint_url,
  has_auth: row.sealed_auth !== null,
  request_schema: row.request_schema,
  response_schema: row.response_schema,
  timeout_ms: row.timeout_ms,
  status: row.status,
  last_tested: row.last_tested,
  created_at: row.created_at,
  updated_at: row.updated_at
})

export interface AuditContext {
  readonly requestId: string | null
}

export interface CustomModelsService {
  readonly create: (principal: Principal, input: NewCustomModel, context: AuditContext) => Effect.Effect<CustomModel, ModelsError>
  readonly list: (principal: Principal) => Effect.Effect<Array<CustomModel>>
  readonly get: (principal: Principal, id: string) => Effect.Effect<CustomModel, ModelsError>
  /** Only the fields given change; `auth_header: null` or "" removes the header. A change resets the test status. */
  readonly update: (principal: Principal, id: string, patch: CustomModelPatch, context: AuditContext) => Effect.Effect<CustomModel, ModelsError>
  readonly remove: (principal: Principal, id: string, context: AuditContext) => Effect.Effect<void, ModelsError>
  /** Endpoint failures are an answer (`status: "error"`), not an error; the result is kept as the model's status. */
  readonly test: (principal: Principal, id: string) => Effect.Effect<CustomModelTest, ModelsError>
}

export const makeCustomModels = Effect.gen(function* () {
  const store = yield* makeCustomModelsStore
  const calls = yield* ModelCalls
  const _config = yield* Config
  const { envelope } = yield* Secrets
  const sql = yield* SqlClient.SqlClient
  const policy = (yield* Outbound).policy

  const seal = (orgUuid: string, id: string, auth: string | undefined) => {
    if (auth === undefined) return { sealed_auth: null, auth_key_id: null }
    const sealed = envelope.seal(auth, sealedAuthFor(orgUuid, id))
    return { sealed_auth: sealed, auth_key_id: envelope.keyIdOf(sealed) }
  }

  const found = Effect.fnUntraced(function* (principal: Principal, id: string) {
    const row = yield* store.byId(principal.orgUuid, id)
    if (row === undefined) return yield* refuse(CustomModelNotFound.of(id))
    return row
  })

  // The audit row is written through the shared audit helper, not this area's store: its failures are defects here.
  const audit = (principal: Principal, event: string, row: CustomModelRow, context: AuditContext) =>
    Effect.andThen(
      calls.forgetCustom(principal.orgUuid),
      insertAudit(sql, { orgUuid: principal.orgUuid, actor: auditActor(principal), event, target: row.id, details: { model_id: row.model_id }, requestId: context.requestId }).pipe(
        Effect.orDie
      )
    )

  const invalid = (issues: Array<Issue>) => (issues.length > 0 ? refuse(InvalidInput.of(issues)) : Effect.void)

  const create = Effect.fn("CustomModels.create")(function* (principal: Principal, input: NewCustomModel, context: AuditContext) {
    const issues: Array<Issue> = []
    const id = newId("cm")
    const fields = {
      name: checkName(input.name, issues),
      model_id: checkModelId(input.model_id, issues),
      endpoint_url: checkEndpoint(input.endpoint_url, policy, issues),
      request_schema: checkRequestSchema(input.request_schema, issues),
      response_schema: checkResponseSchema(input.response_schema, issues),
      timeout_ms: checkTimeout(input.timeout_ms, issues)
    }
    const auth = checkAuth(input.auth_header, issues)
    yield* invalid(issues)
    const row = yield* store.insert({ id, org_uuid: principal.orgUuid, ...fields, ...seal(principal.orgUuid, id, auth) })
    if (row === undefined) return yield* refuse(ModelIdExists.of(fields.model_id))
    yield* audit(principal, "custom_model.created", row, context)
    return customModelView(row)
  })

  const list = Effect.fn("CustomModels.list")(function* (principal: Principal) {
    return (yield* store.byOrg(principal.orgUuid)).map(customModelView)
  })

  const get = Effect.fn("CustomModels.get")(function* (principal: Principal, id: string) {
    return customModelView(yield* found(principal, id))
  })

  const update = Effect.fn("CustomModels.update")(function* (principal: Principal, id: string, patch: CustomModelPatch, context: AuditContext) {
    const current = yield* found(principal, id)
    const issues: Array<Issue> = []
    const fields = {
      name: patch.name === undefined ? current.name : checkName(patch.name, issues),
      endpoint_url: patch.endpoint_url === undefined ? current.endpoint_url : checkEndpoint(patch.endpoint_url, policy, issues),
      request_schema: patch.request_schema === undefined ? current.request_schema : checkRequestSchema(patch.request_schema, issues),
      response_schema: patch.response_schema === undefined ? current.response_schema : checkResponseSchema(patch.response_schema, issues),
      timeout_ms: patch.timeout_ms === undefined ? current.timeout_ms : checkTimeout(patch.timeout_ms, issues)
    }
    const auth = patch.auth_header === undefined ? undefined : checkAuth(patch.auth_header, issues)
    yield* invalid(issues)
    const sealed =
      patch.auth_header === undefined
        ? { sealed_auth: current.sealed_auth, auth_key_id: current.sealed_auth === null ? null : envelope.keyIdOf(current.sealed_auth) }
        : seal(principal.orgUuid, id, auth)
    const row = yield* store.update({ id, org_uuid: principal.orgUuid, ...fields, ...sealed })
    if (row === undefined) return yield* refuse(CustomModelNotFound.of(id))
    yield* audit(principal, "custom_model.updated", row, context)
    return customModelView(row)
  })

  const remove = Effect.fn("CustomModels.remove")(function* (principal: Principal, id: string, context: AuditContext) {
    const row = yield* found(principal, id)
    if (!(yield* store.remove(principal.orgUuid, id))) return yield* refuse(CustomModelNotFound.of(id))
    yield* audit(principal, "custom_model.deleted", row, context)
  })

  const test = Effect.fn("CustomModels.test")(function* (principal: Principal, id: string) {
    const row = yield* found(principal, id)
    const outcome = yield* Effect.result(calls.ask({ orgUuid: principal.orgUuid, model: `custom:${row.model_id}`, system: PROBE_SYSTEM, prompt: PROBE_PROMPT }))
    const ok = outcome._tag === "Success"
    yield* store.recordTest(principal.orgUuid, id, ok ? "ok" : "error")
    if (ok) {
      const answer = outcome.success
      return {
        status: "ok" as const,
        latency_ms: answer.latency_ms,
        response_valid: true,
        structured_output: { decision: answer.decision, confidence: answer.confidence, key_factors: answer.key_factors, reasoning: answer.reasoning },
        error: null
      }
    }
    return { status: "error" as const, latency_ms: outcome.failure.latency_ms, response_valid: false, structured_output: null, error: outcome.failure.message }
  })

  return CustomModels.of({ create, list, get, update, remove, test })
})

export class CustomModels extends Context.Service<CustomModels, CustomModelsService>()("gateway/CustomModels") {
  static readonly layer = Layer.effect(CustomModels, makeCustomModels)
}
