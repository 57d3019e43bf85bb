/**
 * Built-in model catalogue. Provider slugs follow the spec's neutral stand-ins:
 * `direct_a`, `direct_b`, `direct_c` are the three direct model providers.
 * Plain data: the models service adds `available`, `disabled` and `credential_source`.
 */

import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated, OptionallyAuthenticated } from "./auth.js"
import { Pagination, Timestamp } from "./common.js"
import { Forbidden, InvalidInput, refusal, Unauthorized } from "./errors.js"

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

/** The chat default is empty or outside the chat allow-list (spec 002: 400). */
export class InvalidChatDefault extends Schema.Error<InvalidChatDefault>("InvalidChatDefault")(refusal("INVALID_CHAT_DEFAULT"), {
  httpApiStatus: 400,
  description: "The chat default is empty or not in the chat allowed list"
}) {
  readonly _tag = "InvalidChatDefault"
  static of(modelId: string, why: string) {
    return new InvalidChatDefault({ message: why, details: { chat_default_model: modelId } })
  }
}

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
    HttpApiEndpoint.put("putCases", "/api/v1/models/preferences", { error: [Forbidden, InvalidInput], payload: SetDisabledModels, success: DisabledModels }),
    HttpApiEndpoint.get("getPolicy", "/api/v1/models/policy-preferences", { error: Forbidden, success: DisabledModels }),
    HttpApiEndpoint.put("putPolicy", "/api/v1/models/policy-preferences", { error: [Forbidden, InvalidInput], payload: SetDisabledModels, success: DisabledModels }),
    HttpApiEndpoint.get("getSanitize", "/api/v1/models/sanitize-preferences", { error: Forbidden, success: DisabledModels }),
    HttpApiEndpoint.put("putSanitize", "/api/v1/models/sanitize-preferences", { error: [Forbidden, InvalidInput], payload: SetDisabledModels, success: DisabledModels }),
    HttpApiEndpoint.get("getChatDefault", "/api/v1/models/chat-default", { error: Forbidden, success: ChatDefault }),
    HttpApiEndpoint.put("putChatDefault", "/api/v1/models/chat-default", { error: [Forbidden, InvalidChatDefault, InvalidInput],
      payload: Schema.Struct({ chat_default_model: Schema.String }),
      success: ChatDefault
    }),
    HttpApiEndpoint.get("getChatAllowed", "/api/v1/models/chat-allowed", { error: Forbidden, success: ChatAllowed }),
    HttpApiEndpoint.put("putChatAllowed", "/api/v1/models/chat-allowed", { error: [Forbidden, InvalidInput],
      payload: Schema.Struct({ chat_allowed_models: Schema.optionalKey(Schema.NullOr(ModelIds)) }),
      success: ChatAllowed
    }),
    HttpApiEndpoint.get("getCodeReview", "/api/v1/models/code-review-preferences", { error: Forbidden, success: CodeReview }),
    HttpApiEndpoint.put("putCodeReview", "/api/v1/models/code-review-preferences", { error: [Forbidden, InvalidInput],
      payload: Schema.Struct({ default_model: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(200)))), disabled_models: Schema.optionalKey(ModelIds) }),
      success: CodeReview
    })
  )
  .middleware(Authenticated)
  .annotateMerge(OpenApi.annotations({ title: "Model preferences", description: "Which models each feature may use. Every id must be a known model (422 otherwise)." }))
{}

/** The structured answer every model gives: the case and policy verdict. */
export const ModelVerdict = Schema.Struct({
  decision: Schema.Literals(["APPROVE", "DENY", "REVIEW"]),
  confidence: Schema.Number,
  key_factors: Schema.Array(Schema.String),
  reasoning: Schema.String
})
export type ModelVerdict = typeof ModelVerdict.Type

/** Custom model ids are unique in their organization; in cases, policies and preferences they are named `custom:<model_id>`. */
export const CUSTOM_PREFIX = "custom:"

export const CustomModel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  model_id: Schema.String,
  endpoint_url: Schema.String,
  has_auth: Schema.Boolean,
  request_schema: Schema.Record(Schema.String, Schema.Unknown),
  response_schema: Schema.Record(Schema.String, Schema.Unknown),
  timeout_ms: Schema.Int,
  status: Schema.Literals(["untested", "ok", "error"]),
  last_tested: Schema.NullOr(Timestamp),
  created_at: Timestamp,
  updated_at: Schema.NullOr(Timestamp)
})
export type CustomModel = typeof CustomModel.Type

const ObjectField = Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))
const CustomModelFields = {
  name: Schema.String,
  model_id: Schema.String,
  endpoint_url: Schema.String,
  auth_header: Schema.optionalKey(Schema.NullOr(Schema.String)),
  request_schema: Schema.optionalKey(ObjectField),
  response_schema: Schema.optionalKey(ObjectField),
  timeout_ms: Schema.optionalKey(Schema.NullOr(Schema.Number))
}
export const NewCustomModel = Schema.Struct(CustomModelFields)
export type NewCustomModel = typeof NewCustomModel.Type
export const CustomModelPatch = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  endpoint_url: Schema.optionalKey(Schema.String),
  auth_header: CustomModelFields.auth_header,
  request_schema: CustomModelFields.request_schema,
  response_schema: CustomModelFields.response_schema,
  timeout_ms: CustomModelFields.timeout_ms
})
export type CustomModelPatch = typeof CustomModelPatch.Type

export const CustomModelTest = Schema.Struct({
  status: Schema.Literals(["ok", "error"]),
  latency_ms: Schema.Int,
  response_valid: Schema.Boolean,
  structured_output: Schema.NullOr(ModelVerdict),
  error: Schema.NullOr(Schema.String)
})
export type CustomModelTest = typeof CustomModelTest.Type

export class CustomModelNotFound extends Schema.Error<CustomModelNotFound>("CustomModelNotFound")(refusal("NOT_FOUND"), {
  httpApiStatus: 404,
  description: "No such custom model in the caller's organization"
}) {
  readonly _tag = "CustomModelNotFound"
  static of(id: string) {
    return new CustomModelNotFound({ message: `Custom model ${id} not found`, details: { id } })
  }
}

/** `model_id` is unique within the organization (spec 002). */
export class ModelIdExists extends Schema.Error<ModelIdExists>("ModelIdExists")(refusal("MODEL_ID_EXISTS"), {
  httpApiStatus: 409,
  description: "The organization already has a custom model with this model_id"
}) {
  readonly _tag = "ModelIdExists"
  static of(modelId: string) {
    return new ModelIdExists({ message: `A custom model with model_id ${modelId} already exists`, details: { model_id: modelId } })
  }
}

const customId = { id: Schema.String }

export class CustomModelsGroup extends HttpApiGroup.make("customModels")
  .add(
    HttpApiEndpoint.post("create", "/api/v1/models/custom", { error: [Forbidden, InvalidInput, ModelIdExists], payload: NewCustomModel, success: CustomModel.pipe(HttpApiSchema.status(201)) }),
    HttpApiEndpoint.get("list", "/api/v1/models/custom", {
      error: Forbidden,
      success: Schema.Struct({ models: Schema.Array(CustomModel), data: Schema.Array(CustomModel), pagination: Pagination })
    }),
    HttpApiEndpoint.get("get", "/api/v1/models/custom/:id", { params: customId, error: [Forbidden, CustomModelNotFound], success: CustomModel }),
    HttpApiEndpoint.put("update", "/api/v1/models/custom/:id", { params: customId, error: [Forbidden, CustomModelNotFound, InvalidInput], payload: CustomModelPatch, success: CustomModel }),
    HttpApiEndpoint.delete("remove", "/api/v1/models/custom/:id", { params: customId, error: [Forbidden, CustomModelNotFound], success: HttpApiSchema.NoContent }),
    HttpApiEndpoint.post("test", "/api/v1/models/custom/:id/test", { params: customId, error: [Forbidden, CustomModelNotFound], success: CustomModelTest })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Custom models",
      description:
        "Your own OpenAI-compatible endpoints (vLLM, llama.cpp, ...), used in cases and policies as `custom:<model_id>`. HTTPS only; `auth_header` is sent as the Authorization value, stored encrypted and never returned (`has_auth`). `/test` reports endpoint failures inside a 200."
    })
  )
{}
