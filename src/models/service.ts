/**
 * The model catalogue and an organization's model preferences. Built-in models come from
 * protocol/models.ts; `credential_source` is `byok` when the organization configured the model's
 * provider. Self-hosted deployments have no platform-managed keys, so without one it is null.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Principal } from "../../protocol/auth.js"
import { BUILTIN_MODELS, type CatalogueEntry, CODE_REVIEW_DEFAULT_MODEL, CUSTOM_PREFIX } from "../../protocol/models.js"
import { InvalidInput } from "../platform/domain-error.js"
import { ProviderCredentials } from "../provider-credentials/service.js"
import { ModelCalls, providersOf } from "./calls.js"
import { makeCustomModelsStore } from "./custom-store.js"
import { InvalidChatDefault, type ModelsError, refuse } from "./errors.js"
import { type Feature, makeModelsStore, type PreferencesRow } from "./store.js"

export interface DisabledModels {
  readonly disabled_models: ReadonlyArray<string>
}

export interface CodeReviewPreferences {
  readonly default_model: string
  readonly disabled_models: ReadonlyArray<string>
}

export interface CodeReviewChange {
  readonly default_model?: string | null
  readonly disabled_models?: ReadonlyArray<string>
}

export interface ModelsService {
  /**
   * Built-in models for everyone; an organization also learns which it has a key for and,
   * unless `includeDisabled`, does not see the models it disabled for cases.
   */
  readonly catalogue: (principal: Principal | undefined, includeDisabled: boolean) => Effect.Effect<Array<CatalogueEntry>>
  readonly disabled: (principal: Principal, feature: Feature) => Effect.Effect<DisabledModels>
  readonly setDisabled: (principal: Principal, feature: Feature, ids: ReadonlyArray<string> | null | undefined) => Effect.Effect<DisabledModels, ModelsError>
  readonly chatDefault: (principal: Principal) => Effect.Effect<{ readonly chat_default_model: string | null }>
  readonly setChatDefault: (principal: Principal, id: string) => Effect.Effect<{ readonly chat_default_model: string | null }, ModelsError>
  readonly chatAllowed: (principal: Principal) => Effect.Effect<{ readonly chat_allowed_models: ReadonlyArray<string> | null }>
  /** null or empty: every enabled model. */
  readonly setChatAllowed: (
    principal: Principal,
    ids: ReadonlyArray<string> | null | undefined
  ) => Effect.Effect<{ readonly chat_allowed_models: ReadonlyArray<string> | null }, ModelsError>
  readonly codeReview: (principal: Principal) => Effect.Effect<CodeReviewPreferences>
  /** Omitted fields stay; a null default goes back to the built-in default. */
  readonly setCodeReview: (principal: Principal, input: CodeReviewChange) => Effect.Effect<CodeReviewPreferences, ModelsError>
}

const disabledOf = (row: PreferencesRow, feature: Feature) => row.disabled[feature] ?? []

const disabledAnswer = (row: PreferencesRow, feature: Feature): DisabledModels => ({ disabled_models: disabledOf(row, feature) })

const codeReviewAnswer = (row: PreferencesRow): CodeReviewPreferences => ({
  default_model: row.code_review_default ?? CODE_REVIEW_DEFAULT_MODEL,
  disabled_models: disabledOf(row, "code_review")
})

export const makeModels = Effect.gen(function* () {
  const store = yield* makeModelsStore
  const providers = yield* ProviderCredentials
  const calls = yield* ModelCalls
  const customs = yield* makeCustomModelsStore

  /** Every id must be a built-in or one of the organization's custom models (spec 002: 422 otherwise), each unknown one named. */
  const knownIds = Effect.fnUntraced(function* (principal: Principal, field: string, ids: ReadonlyArray<string>) {
    const unknown: Array<string> = []
    for (const id of new Set(ids)) if (!(yield* calls.isKnown(principal.orgUuid, id))) unknown.push(id)
    if (unknown.length > 0) return yield* refuse(InvalidInput.of(unknown.map((id) => ({ path: field, message: `unknown model id: ${id}` }))))
    return [...new Set(ids)]
  })

  const catalogue = Effect.fn("Models.catalogue")(function* (principal: Principal | undefined, includeDisabled: boolean) {
    if (principal === undefined) {
      return BUILTIN_MODELS.map((model): CatalogueEntry => ({ ...model, available: false, credential_source: null }))
    }
    const configured = new Set<string>((yield* providers.list(principal)).providers.filter((item) => item.configured).map((item) => item.slug))
    const disabled = new Set(disabledOf(yield* store.get(principal.orgUuid), "cases"))
    const custom = (yield* customs.byOrg(principal.orgUuid)).map((row) => ({
      model_id: `${CUSTOM_PREFIX}${row.model_id}`,
      provider: "custom",
      display_name: row.name,
      max_tokens: null,
      byok: true
    }))
    const builtin = BUILTIN_MODELS.map((model) => ({ ...model, byok: providersOf(model.provider).some((slug) => configured.has(slug)) }))
    return [...builtin, ...custom]
      .filter((model) => includeDisabled || !disabled.has(model.model_id))
      .map(({ byok, ...model }): CatalogueEntry => ({
        ...model,
        available: byok,
        credential_source: byok ? "byok" : null,
        ...(includeDisabled ? { disabled: disabled.has(model.model_id) } : {})
      }))
  })

  const disabled = Effect.fn("Models.disabled")(function* (principal: Principal, feature: Feature) {
    return disabledAnswer(yield* store.get(principal.orgUuid), feature)
  })

  const setDisabled = Effect.fn("Models.setDisabled")(function* (principal: Principal, feature: Feature, ids: ReadonlyArray<string> | null | undefined) {
    const known = yield* knownIds(principal, "disabled_models", ids ?? [])
    return disabledAnswer(yield* store.setDisabled(principal.orgUuid, feature, known), feature)
  })

  const chatDefault = Effect.fn("Models.chatDefault")(function* (principal: Principal) {
    return { chat_default_model: (yield* store.get(principal.orgUuid)).chat_default }
  })

  const setChatDefault = Effect.fn("Models.setChatDefault")(function* (principal: Principal, id: string) {
    if (id.trim() === "") return yield* refuse(InvalidChatDefault.of(id, "chat_default_model must not be empty"))
    yield* knownIds(principal, "chat_default_model", [id])
    const allowed = (yield* store.get(principal.orgUuid)).chat_allowed
    if (allowed !== null && !allowed.includes(id)) return yield* refuse(InvalidChatDefault.of(id, `${id} is not in the chat allowed list`))
    return { chat_default_model: (yield* store.setChatDefault(principal.orgUuid, id)).chat_default }
  })

  const chatAllowed = Effect.fn("Models.chatAllowed")(function* (principal: Principal) {
    return { chat_allowed_models: (yield* store.get(principal.orgUuid)).chat_allowed }
  })

  const setChatAllowed = Effect.fn("Models.setChatAllowed")(function* (principal: Principal, ids: ReadonlyArray<string> | null | undefined) {
    const known = ids === null || ids === undefined || ids.length === 0 ? null : yield* knownIds(principal, "chat_allowed_models", ids)
    return { chat_allowed_models: (yield* store.setChatAllowed(principal.orgUuid, known)).chat_allowed }
  })

  const codeReview = Effect.fn("Models.codeReview")(function* (principal: Principal) {
    return codeReviewAnswer(yield* store.get(principal.orgUuid))
  })

  const setCodeReview = Effect.fn("Models.setCodeReview")(function* (principal: Principal, input: CodeReviewChange) {
    if (typeof input.default_model === "string") yield* knownIds(principal, "default_model", [input.default_model])
    const disabledIds = input.disabled_models === undefined ? undefined : yield* knownIds(principal, "disabled_models", input.disabled_models)
    return codeReviewAnswer(yield* store.setCodeReview(principal.orgUuid, input.default_model, disabledIds))
  })

  return Models.of({ catalogue, disabled, setDisabled, chatDefault, setChatDefault, chatAllowed, setChatAllowed, codeReview, setCodeReview })
})

export class Models extends Context.Service<Models, ModelsService>()("gateway/Models") {
  static readonly layer = Layer.effect(Models, makeModels)
}
