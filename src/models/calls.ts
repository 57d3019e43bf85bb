/**
 * The model layer: one structured question to one model, as an Effect. Built-in models go
 * through the organization's configured provider (no platform keys in a self-hosted gateway),
 * custom models through the OpenAI-compatible provider with the outbound client as its fetch.
 * Every answer is `{decision, confidence, key_factors, reasoning}`; interrupting the Effect
 * aborts the HTTP call; failures carry a message with every secret of the call scrubbed out.
 */
import { readFileSync } from "node:fs"
import type { LanguageModel } from "ai"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { CUSTOM_PREFIX, findBuiltinModel, ModelVerdict } from "../../protocol/models.js"
import type { ProviderSlug } from "../../protocol/provider-credentials.js"
import { Config } from "../platform/config.js"
import { lazyImport, loadOnce } from "../platform/lazy.js"
import { Outbound, outboundFetch } from "../platform/outbound/index.js"
import { Secrets } from "../platform/secrets.js"
import { storedFieldsProblem } from "../provider-credentials/fields.js"
import { ProviderCredentials } from "../provider-credentials/service.js"
import { customFetch } from "./custom-fetch.js"
import { type CustomModelRow, makeCustomModelsStore } from "./custom-store.js"
import { customModel, providerModel } from "./providers.js"

export interface AskInput {
  readonly orgUuid: string
  /** A built-in id or `custom:<model_id>`. */
  readonly model: string
  readonly system: string
  readonly prompt: string
  /** Caps the model's own timeout (a policy's time budget, say). */
  readonly timeoutMs?: number
}

export interface ModelAnswer extends ModelVerdict {
  readonly model: string
  readonly model_version: string
  readonly provider: string
  readonly latency_ms: number
}

/** A model ready for a free-form conversation (chat), with or without tool calling. */
export interface ConversationModel {
  readonly model: LanguageModel
  readonly provider: string
  /** The custom model's own system prompt, to put before the caller's. */
  readonly system: string | undefined
  /** Function calling: built-in models, and custom models with `request_schema.tools: true`. */
  readonly tools: boolean
  /** A failure of a call to this model as a message, with the call's secrets scrubbed out. */
  readonly failure: (cause: unknown) => string
}

export class ModelCallFailed extends Data.TaggedError("ModelCallFailed")<{
  readonly model: string
  readonly provider: string
  readonly message: string
  readonly latency_ms: number
}> {}

const CUSTOM_TTL_MS = 5_000
const MAX_CACHED_CUSTOM = 10_000

/** A model's answer is one verdict: far below this. */
const MAX_MODEL_RESPONSE_BYTES = 4 * 1024 * 1024

/** Built-in calls without an own timeout. */
export const BUILTIN_TIMEOUT_MS = 30_000

/** Other routes to a direct provider's models (docs/decisions.md). */
const ALSO_THROUGH: Partial<Record<ProviderSlug, ReadonlyArray<ProviderSlug>>> = { direct_b: ["cloud_b"], direct_c: ["cloud_c"] }

export const providersOf = (provider: ProviderSlug): ReadonlyArray<ProviderSlug> => [provider, ...(ALSO_THROUGH[provider] ?? [])]

const verdictJsonSchema = {
  type: "object",
  properties: {
    decision: { type: "string", enum: ["APPROVE", "DENY", "REVIEW"] },
    confidence: { type: "number", minimum: 0, maximum: 1 },
    key_factors: { type: "array", items: { type: "string" } },
    reasoning: { type: "string" }
  },
  required: ["decision", "confidence", "key_factors", "reasoning"],
  additionalProperties: false
} as const

const decodeVerdict = Schema.decodeUnknownExit(ModelVerdict)

/** Accepts a lower-case decision and clamps confidence; anything else off-schema is refused. */
export const normalizeVerdict = (value: unknown): { success: true; value: ModelVerdict } | { success: false; error: Error } => {
  const raw = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {}
  const candidate = {
    ...raw,
    decision: typeof raw.decision === "string" ? raw.decision.trim().toUpperCase() : raw.decision,
    key_factors: Array.isArray(raw.key_factors) ? raw.key_factors.map(String).slice(0, 20) : raw.key_factors
  }
  const exit = decodeVerdict(candidate)
  if (exit._tag === "Failure" || !Number.isFinite(exit.value.confidence)) return { success: false, error: new Error("the answer is not {decision, confidence, key_factors, reasoning}") }
  const verdict = exit.value
  return { success: true, value: { decision: verdict.decision, confidence: Math.min(1, Math.max(0, verdict.confidence)), key_factors: verdict.key_factors, reasoning: verdict.reasoning.slice(0, 10_000) } }
}

/** The AI SDK, at the first model call (src/platform/lazy.ts), with the verdict's output shape made once. */
const aiSdk = lazyImport(async () => {
  const ai = await import("ai")
  const verdictSchema = ai.jsonSchema<ModelVerdict>(verdictJsonSchema as never, { validate: normalizeVerdict })
  return { generateText: ai.generateText, verdictOutput: () => ai.Output.object({ schema: verdictSchema, name: "verdict" }) }
})

const MAX_ERROR_CHARS = 300

const scrub = (message: string, secrets: ReadonlyArray<string>) => {
  let out = message
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]")
  return out.length > MAX_ERROR_CHARS ? `${out.slice(0, MAX_ERROR_CHARS)}...` : out
}

const messageOf = (cause: unknown): string => {
  if (cause instanceof Error) {
    const status = (cause as { statusCode?: number }).statusCode
    const base = cause.name === "AI_NoObjectGeneratedError" ? "the model's answer is not {decision, confidence, key_factors, reasoning}" : cause.message
    return status === undefined ? base : `HTTP ${status}: ${base}`
  }
  return String(cause)
}

interface Resolved {
  /** Built at the first call (a provider's SDK is imported then), not when the model is named. */
  readonly model: () => Promise<LanguageModel>
  /** The same model for free-form answers: a custom model's fetch adds no verdict schema. */
  readonly conversationModel: () => Promise<LanguageModel>
  readonly tools: boolean
  readonly provider: string
  readonly upstreamId: string
  readonly timeoutMs: number
  readonly system: string | undefined
  readonly secrets: ReadonlyArray<string>
}

export const makeModelCalls = Effect.gen(function* () {
  const config = yield* Config
  const { envelope } = yield* Secrets
  const providers = yield* ProviderCredentials
  const customs = yield* makeCustomModelsStore
  const policy = (yield* Outbound).policy
  const ca = config.outboundCaFile === undefined ? undefined : readFileSync(config.outboundCaFile)
  // Vendor hosts go through the outbound client like everything else (its timeout is the model call's own).
  const vendorFetch = outboundFetch({ policy, ca, timeoutMs: BUILTIN_TIMEOUT_MS, maxResponseBytes: MAX_MODEL_RESPONSE_BYTES, keepAlive: true })

  const authorizationOf = (row: CustomModelRow) => (row.sealed_auth === null ? undefined : envelope.openText(row.sealed_auth, `custom-model:${row.org_uuid}:${row.id}`))

  const resolveCustom = (row: CustomModelRow): Resolved => {
    const authorization = authorizationOf(row)
    const settings = row.request_schema
    const upstreamId = typeof settings.model === "string" && settings.model !== "" ? settings.model : row.model_id
    const build = (fetchSettings: CustomModelRow, schema: unknown) =>
      loadOnce(() =>
        customModel({
          endpointUrl: row.endpoint_url,
          upstreamModel: upstreamId,
          authorization,
          // keepAlive: pooled sockets are keyed by the checked address, and every call still checks it.
          fetch: customFetch(outboundFetch({ policy, ca, timeoutMs: row.timeout_ms, maxResponseBytes: MAX_MODEL_RESPONSE_BYTES, keepAlive: true }), fetchSettings, schema)
        })
      )
    return {
      model: build(row, verdictJsonSchema),
      conversationModel: build({ ...row, request_schema: { ...settings, guided_json: false } }, undefined),
      tools: settings.tools === true,
      provider: "custom",
      upstreamId,
      timeoutMs: row.timeout_ms,
      system: typeof settings.system_prompt === "string" ? settings.system_prompt : undefined,
      secrets: authorization === undefined ? [] : [authorization, authorization.replace(/^\S+\s+/, "")]
    }
  }

  // Custom models as last read, ready to call, for a few seconds: a case or policy names each
  // model twice (validation, call) and runs often. A change in this process forgets them at once;
  // other processes see it within CUSTOM_TTL_MS.
  const customCache = new Map<string, { readonly resolved: Resolved | undefined; readonly expires: number }>()
  const customModelOf = (orgUuid: string, modelId: string): Effect.Effect<Resolved | undefined> => {
    const key = `${orgUuid}\n${modelId}`
    const cached = customCache.get(key)
    if (cached !== undefined && cached.expires > Date.now()) return Effect.succeed(cached.resolved)
    return Effect.map(customs.byModelId(orgUuid, modelId), (row) => {
      const resolved = row === undefined ? undefined : resolveCustom(row)
      if (customCache.size >= MAX_CACHED_CUSTOM) customCache.delete(customCache.keys().next().value!)
      customCache.set(key, { resolved, expires: Date.now() + CUSTOM_TTL_MS })
      return resolved
    })
  }

  /** The model to call, or why it cannot be called. */
  const resolve = (orgUuid: string, id: string): Effect.Effect<Resolved, string> =>
    Effect.gen(function* () {
      if (id.startsWith(CUSTOM_PREFIX)) {
        const resolved = yield* customModelOf(orgUuid, id.slice(CUSTOM_PREFIX.length))
        if (resolved === undefined) return yield* Effect.fail(`unknown model ${id}`)
        return resolved
      }
      const builtin = findBuiltinModel(id)
      if (builtin === undefined) return yield* Effect.fail(`unknown model ${id}`)
      for (const slug of providersOf(builtin.provider)) {
        const fields = yield* providers.credentialsFor(orgUuid, slug)
        if (fields === undefined) continue
        const problem = storedFieldsProblem(slug, fields)
        if (problem !== undefined) return yield* Effect.fail(`the stored ${slug} credentials cannot be used (${problem}); save them again (POST /api/v1/provider-credentials)`)
        const built = yield* Effect.promise(() => providerModel(slug, fields, id, vendorFetch))
        if ("problem" in built) return yield* Effect.fail(built.problem)
        const model = Promise.resolve(built.model)
        return {
          model: () => model,
          conversationModel: () => model,
          tools: true,
          provider: slug,
          upstreamId: id,
          timeoutMs: BUILTIN_TIMEOUT_MS,
          system: undefined,
          secrets: Object.values(fields)
        }
      }
      return yield* Effect.fail(`no credentials for provider ${builtin.provider} are configured (POST /api/v1/provider-credentials)`)
    })

  const providerOf = (id: string) => (id.startsWith(CUSTOM_PREFIX) ? "custom" : (findBuiltinModel(id)?.provider ?? "unknown"))

  const ask = (input: AskInput): Effect.Effect<ModelAnswer, ModelCallFailed> =>
    Effect.gen(function* () {
      const started = performance.now()
      const elapsed = () => Math.round(performance.now() - started)
      const resolved = yield* Effect.mapError(resolve(input.orgUuid, input.model), (message) => new ModelCallFailed({ model: input.model, provider: providerOf(input.model), message, latency_ms: elapsed() }))
      const timeoutMs = Math.min(resolved.timeoutMs, input.timeoutMs ?? Number.POSITIVE_INFINITY)
      const failed = (message: string) => new ModelCallFailed({ model: input.model, provider: resolved.provider, message: scrub(message, resolved.secrets), latency_ms: elapsed() })
      const ai = yield* aiSdk
      const result = yield* Effect.tryPromise({
        try: async (signal) =>
          ai.generateText({
            model: await resolved.model(),
            system: resolved.system === undefined ? input.system : `${resolved.system}\n\n${input.system}`,
            prompt: input.prompt,
            output: ai.verdictOutput(),
            abortSignal: signal,
            maxRetries: 0
          }),
        catch: (cause) => failed(messageOf(cause))
      }).pipe(
        Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.fail(failed(`no answer within ${timeoutMs} ms`)) })
      )
      const verdict = result.output as ModelVerdict
      return {
        model: input.model,
        model_version: result.response.modelId || resolved.upstreamId,
        provider: resolved.provider,
        latency_ms: elapsed(),
        ...verdict
      }
    })

  /** The model for a conversation, or why it cannot be called (no credentials, unknown id). */
  const conversation = (orgUuid: string, id: string): Effect.Effect<ConversationModel, ModelCallFailed> =>
    Effect.gen(function* () {
      const resolved = yield* Effect.mapError(resolve(orgUuid, id), (message) => new ModelCallFailed({ model: id, provider: providerOf(id), message, latency_ms: 0 }))
      const model = yield* Effect.promise(() => resolved.conversationModel())
      return {
        model,
        provider: resolved.provider,
        system: resolved.system,
        tools: resolved.tools,
        failure: (cause: unknown) => scrub(messageOf(cause), resolved.secrets)
      }
    })

  /** Whether the organization can name this model (built-in, or one of its custom models). */
  const isKnown = (orgUuid: string, id: string) =>
    id.startsWith(CUSTOM_PREFIX)
      ? Effect.map(customModelOf(orgUuid, id.slice(CUSTOM_PREFIX.length)), (resolved) => resolved !== undefined)
      : Effect.succeed(findBuiltinModel(id) !== undefined)

  /** After a custom model of the organization changed here. */
  const forgetCustom = (orgUuid: string) =>
    Effect.sync(() => {
      for (const key of customCache.keys()) if (key.startsWith(`${orgUuid}\n`)) customCache.delete(key)
    })

  return ModelCalls.of({ ask, conversation, isKnown, forgetCustom, providerOf })
})

export interface ModelCallsService {
  /** One structured question to one model; failures carry a message with the call's secrets scrubbed out. */
  readonly ask: (input: AskInput) => Effect.Effect<ModelAnswer, ModelCallFailed>
  /** A model for a free-form conversation (chat) with the organization's credentials, built, not yet called. */
  readonly conversation: (orgUuid: string, id: string) => Effect.Effect<ConversationModel, ModelCallFailed>
  /** Whether the organization can name this model (built-in, or one of its custom models). */
  readonly isKnown: (orgUuid: string, id: string) => Effect.Effect<boolean>
  /** After a custom model of the organization changed here. */
  readonly forgetCustom: (orgUuid: string) => Effect.Effect<void>
  /** `custom` for custom models, else the built-in model's provider (`unknown` when there is none). */
  readonly providerOf: (id: string) => string
}

export class ModelCalls extends Context.Service<ModelCalls, ModelCallsService>()("gateway/ModelCalls") {
  static readonly layer = Layer.effect(ModelCalls, makeModelCalls)
}
