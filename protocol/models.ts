/**
 * Built-in model catalogue. Provider slugs follow the spec's neutral stand-ins:
 * `direct_a`, `direct_b`, `direct_c` are the three direct model providers.
 * Plain data: the models service adds `available`, `disabled` and `credential_source`.
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, OptionallyAuthenticated } from "./auth.js"
import { BadRequest, Forbidden, Unauthorized, Unprocessable } from "./errors.js"

export type DirectProvider = "direct_a" | "direct_b" | "direct_c"

export interface BuiltinModel {
  readonly model_id: string
  readonly provider: DirectProvider
  readonly display_name: string
  /** Maximum output tokens. */
  readonly max_tokens: number | null
}

export const BUILTIN_MODELS: ReadonlyArray<BuiltinModel> = [
  { model_id: "claude-opus-4-5", provider: "direct_a", display_name: "Claude Opus 4.5", max_tokens: 64_000 },
  { model_id: "claude-opus-4-1", provider: "direct_a", display_name: "Claude Opus 4.1", max_tokens: 32_000 },
  { model_id: "claude-sonnet-4-6", provider: "direct_a", display_name: "Claude Sonnet 4.6", max_tokens: 64_000 },
  { model_id: "claude-sonnet-4-5", provider: "direct_a", display_name: "Claude Sonnet 4.5", max_tokens: 64_000 },
  { model_id: "claude-sonnet-4-0", provider: "direct_a", display_name: "Claude Sonnet 4", max_tokens: 64_000 },
  { model_id: "claude-haiku-4-5", provider: "direct_a", display_name: "Claude Haiku 4.5", max_tokens: 64_000 },
  { model_id: "claude-3-5-haiku-latest", provider: "direct_a", display_name: "Claude Haiku 3.5", max_tokens: 8_192 },
  { model_id: "gpt-5", provider: "direct_b", display_name: "GPT-5", max_tokens: 128_000 },
  { model_id: "gpt-5-mini", provider: "direct_b", display_name: "GPT-5 mini", max_tokens: 128_000 },
  { model_id: "gpt-5-nano", provider: "direct_b", display_name: "GPT-5 nano", max_tokens: 128_000 },
  { model_id: "gpt-4.1", provider: "direct_b", display_name: "GPT-4.1", max_tokens: 32_768 },
  { model_id: "gpt-4.1-mini", provider: "direct_b", display_name: "GPT-4.1 mini", max_tokens: 32_768 },
  { model_id: "gpt-4o", provider: "direct_b", display_name: "GPT-4o", max_tokens: 16_384 },
  { model_id: "gpt-4o-mini", provider: "direct_b", display_name: "GPT-4o mini", max_tokens: 16_384 },
  { model_id: "o3", provider: "direct_b", display_name: "o3", max_tokens: 100_000 },
  { model_id: "o4-mini", provider: "direct_b", display_name: "o4-mini", max_tokens: 100_000 },
  { model_id: "gemini-2.5-pro", provider: "direct_c", display_name: "Gemini 2.5 Pro", max_tokens: 65_536 },
  { model_id: "gemini-2.5-flash", provider: "direct_c", display_name: "Gemini 2.5 Flash", max_tokens: 65_536 },
  { model_id: "gemini-2.5-flash-lite", provider: "direct_c", display_name: "Gemini 2.5 Flash-Lite", max_tokens: 65_536 },
  { model_id: "gemini-2.0-flash", provider: "direct_c", display_name: "Gemini 2.0 Flash", max_tokens: 8_192 }
]

const BY_ID: ReadonlyMap<string, BuiltinModel> = new Map(BUILTIN_MODELS.map((model) => [model.model_id, model]))

/** True for built-in model ids (custom models, prefixed `custom:`, are checked by the models service). */
export const isKnownModel = (id: string): boolean => BY_ID.has(id)

export const findBuiltinModel = (id: string): BuiltinModel | undefined => BY_ID.get(id)

/** The code review agent's default: a mid-tier model of the first direct provider (spec 002). */
export const CODE_REVIEW_DEFAULT_MODEL = "claude-sonnet-4-6"

export const CatalogueEntry = Schema.Struct({
  model_id: Schema.String,
  provider: Schema.String,
  display_name: Schema.String,
  available: Schema.Boolean,
  max_tokens: Schema.NullOr(Schema.Number),
  disabled: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  credential_source: Schema.NullOr(Schema.Literals(["byok", "platform"]))
})
export type CatalogueEntry = typeof CatalogueEntry.Type

const ModelIds = Schema.Array(Schema.String.check(Schema.isMaxLength(200))).check(Schema.isMaxLength(500))
const DisabledModels = Schema.Struct({ disabled_models: Schema.Array(Schema.String) })
const SetDisabledModels = Schema.Struct({ disabled_models: Schema.optionalKey(Schema.NullOr(ModelIds)) })
const ChatDefault = Schema.Struct({ chat_default_model: Schema.NullOr(Schema.String) })
const ChatAllowed = Schema.Struct({ chat_allowed_models: Schema.NullOr(Schema.Array(Schema.String)) })
const CodeReview = Schema.Struct({ default_model: Schema.NullOr(Schema.String), disabled_models: Schema.Array(Schema.String) })

export class ModelsGroup extends HttpApiGroup.make("models")
  .add(
    HttpApiEndpoint.get("catalogue", "/api/v1/models", {
      query: { include_disabled: Schema.optionalKey(Schema.Literals(["true", "false", "1", "0"])) },
      error: Unauthorized,
      success: Schema.Array(CatalogueEntry)
    }).middleware(OptionallyAuthenticated)
  )
  .annotateMerge(OpenApi.annotations({ title: "Models", description: "The model catalogue: built-in models for everyone; with a key, the organization's view." }))
{}

export class ModelPreferencesGroup extends HttpApiGroup.make("modelPreferences")
  .add(
    // Disabled models per feature: cases (`preferences`), policy evaluation, sanitize.
    HttpApiEndpoint.get("getCases", "/api/v1/models/preferences", { error: Forbidden, success: DisabledModels }),
    HttpApiEndpoint.put("putCases", "/api/v1/models/preferences", { error: [Forbidden, Unprocessable], payload: SetDisabledModels, success: DisabledModels }),
    HttpApiEndpoint.get("getPolicy", "/api/v1/models/policy-preferences", { error: Forbidden, success: DisabledModels }),
    HttpApiEndpoint.put("putPolicy", "/api/v1/models/policy-preferences", { error: [Forbidden, Unprocessable], payload: SetDisabledModels, success: DisabledModels }),
    HttpApiEndpoint.get("getSanitize", "/api/v1/models/sanitize-preferences", { error: Forbidden, success: DisabledModels }),
    HttpApiEndpoint.put("putSanitize", "/api/v1/models/sanitize-preferences", { error: [Forbidden, Unprocessable], payload: SetDisabledModels, success: DisabledModels }),
    HttpApiEndpoint.get("getChatDefault", "/api/v1/models/chat-default", { error: Forbidden, success: ChatDefault }),
    HttpApiEndpoint.put("putChatDefault", "/api/v1/models/chat-default", { error: [Forbidden, BadRequest, Unprocessable],
      payload: Schema.Struct({ chat_default_model: Schema.String }),
      success: ChatDefault
    }),
    HttpApiEndpoint.get("getChatAllowed", "/api/v1/models/chat-allowed", { error: Forbidden, success: ChatAllowed }),
    HttpApiEndpoint.put("putChatAllowed", "/api/v1/models/chat-allowed", { error: [Forbidden, Unprocessable],
      payload: Schema.Struct({ chat_allowed_models: Schema.optionalKey(Schema.NullOr(ModelIds)) }),
      success: ChatAllowed
    }),
    HttpApiEndpoint.get("getCodeReview", "/api/v1/models/code-review-preferences", { error: Forbidden, success: CodeReview }),
    HttpApiEndpoint.put("putCodeReview", "/api/v1/models/code-review-preferences", { error: [Forbidden, Unprocessable],
      payload: Schema.Struct({ default_model: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(200)))), disabled_models: Schema.optionalKey(ModelIds) }),
      success: CodeReview
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Model preferences", description: "Which models each feature may use. Every id must be a known model (422 otherwise)." }))
{}
