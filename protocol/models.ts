/**
 * Built-in model catalogue. Provider slugs follow the spec's neutral stand-ins:
 * `direct_a`, `direct_b`, `direct_c` are the three direct model providers.
 * Plain data: the models service adds `available`, `disabled` and `credential_source`.
 */

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
