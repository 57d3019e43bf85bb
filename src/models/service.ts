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
import { InvalidChatDefault, refuse } from "./errors.js"
import { type Feature, makeModelsStore, type PreferencesRow } from "./store.js"

const disabledOf = (row: PreferencesRow, feature: Feature) => row.disabled[feature] ?? []

export const makeModels = Effect.gen(function* () {
  const store = yield* makeModelsStore
  const providers = yield* ProviderCredentials
  const calls = yield* ModelCalls
  const customs = yield* makeCustomModelsStore

  /** Every id must be a built-in or one of the organization's custom models (spec 002: 422 otherwise), each unknown one named. */
  const knownIds = (principal: Principal, field: string, ids: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const unknown: Array<string> = []
      for (const id of new Set(ids)) if (!(yield* calls.isKnown(principal.orgUuid, id))) unknown.push(id)
      return unknown.length === 0
        ? [...new Set(ids)]
        : yield* refuse(new InvalidInput({ issues: unknown.map((id) => ({ path: field, message: `unknown model id: ${id}` })) }))
    })

  const disabledAnswer = (row: PreferencesRow, feature: Feature) => ({ disabled_models: disabledOf(row, feature) })

  return {
    /**
     * Built-in models for everyone; an organization also learns which it has a key for and,
     * unless `includeDisabled`, does not see the models it disabled for cases.
     */
    catalogue: (principal: Principal | undefined, includeDisabled: boolean) =>
      Effect.gen(function* () {
        if (principal === undefined) {
          return BUILTIN_MODELS.map((model): CatalogueEntry => ({ ...model, available: false, credential_source: null }))
        }
        const configured = new Set<string>((yield* providers.list(principal)).providers.filter((item) => item.configured).map((item) => item.slug))
        const disabled = new Set(disabledOf(yield* Effect.orDie(store.get(principal.orgUuid)), "cases"))
        const custom = (yield* Effect.orDie(customs.byOrg(principal.orgUuid))).map((row) => ({
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
      }),

    disabled: (principal: Principal, feature: Feature) => Effect.map(Effect.orDie(store.get(principal.orgUuid)), (row) => disabledAnswer(row, feature)),

    setDisabled: (principal: Principal, feature: Feature, ids: ReadonlyArray<string> | null | undefined) =>
      Effect.gen(function* () {
        const known = yield* knownIds(principal, "disabled_models", ids ?? [])
        return disabledAnswer(yield* Effect.orDie(store.setDisabled(principal.orgUuid, feature, known)), feature)
      }),

    chatDefault: (principal: Principal) => Effect.map(Effect.orDie(store.get(principal.orgUuid)), (row) => ({ chat_default_model: row.chat_default })),

    setChatDefault: (principal: Principal, id: string) =>
      Effect.gen(function* () {
        if (id.trim() === "") return yield* refuse(new InvalidChatDefault({ model_id: id, why: "chat_default_model must not be empty" }))
        yield* knownIds(principal, "chat_default_model", [id])
        const allowed = (yield* Effect.orDie(store.get(principal.orgUuid))).chat_allowed
        if (allowed !== null && !allowed.includes(id)) return yield* refuse(new InvalidChatDefault({ model_id: id, why: `${id} is not in the chat allowed list` }))
        return { chat_default_model: (yield* Effect.orDie(store.setChatDefault(principal.orgUuid, id))).chat_default }
      }),

    chatAllowed: (principal: Principal) => Effect.map(Effect.orDie(store.get(principal.orgUuid)), (row) => ({ chat_allowed_models: row.chat_allowed })),

    /** null or empty: every enabled model. */
    setChatAllowed: (principal: Principal, ids: ReadonlyArray<string> | null | undefined) =>
      Effect.gen(function* () {
        const known = ids === null || ids === undefined || ids.length === 0 ? null : yield* knownIds(principal, "chat_allowed_models", ids)
        return { chat_allowed_models: (yield* Effect.orDie(store.setChatAllowed(principal.orgUuid, known))).chat_allowed }
      }),

    codeReview: (principal: Principal) =>
      Effect.map(Effect.orDie(store.get(principal.orgUuid)), (row) => ({
        default_model: row.code_review_default ?? CODE_REVIEW_DEFAULT_MODEL,
        disabled_models: disabledOf(row, "code_review")
      })),

    /** Omitted fields stay; a null default goes back to the built-in default. */
    setCodeReview: (principal: Principal, input: { readonly default_model?: string | null; readonly disabled_models?: ReadonlyArray<string> }) =>
      Effect.gen(function* () {
        if (typeof input.default_model === "string") yield* knownIds(principal, "default_model", [input.default_model])
        const disabled = input.disabled_models === undefined ? undefined : yield* knownIds(principal, "disabled_models", input.disabled_models)
        const row = yield* Effect.orDie(store.setCodeReview(principal.orgUuid, input.default_model, disabled))
        return { default_model: row.code_review_default ?? CODE_REVIEW_DEFAULT_MODEL, disabled_models: disabledOf(row, "code_review") }
      })
  }
})

export class Models extends Context.Service<Models, Effect.Success<typeof makeModels>>()("gateway/Models") {
  static readonly layer = Layer.effect(Models, makeModels)
}
