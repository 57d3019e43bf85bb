/**
 * AI SDK language models for the spec's provider slugs (docs/decisions.md "Model layer"):
 * direct_a Anthropic, direct_b OpenAI, direct_c Google; cloud_a Amazon Bedrock, cloud_b Azure
 * OpenAI, cloud_c Google Vertex AI; custom endpoints through the OpenAI-compatible provider.
 * Every provider gets the outbound client as its `fetch` and every setting explicitly (base URL,
 * keys, region, no session token), so nothing falls back to the server's own environment
 * (OPENAI_BASE_URL, AWS_*, GOOGLE_APPLICATION_CREDENTIALS, ...) or to another HTTP client.
 * Each provider's package is imported at its first use (src/platform/lazy.ts says why): a
 * gateway that only ever calls one vendor never holds the other six in memory.
 */
import type { LanguageModel } from "ai"
import type { ProviderSlug } from "../../protocol/provider-credentials.js"
import type { FetchLike } from "../platform/outbound/index.js"
import { parseServiceAccount } from "../provider-credentials/service-account.js"
import { tokenClient } from "./google-auth.js"

type Fields = Readonly<Record<string, string>>

/**
 * A built-in model through one of the organization's configured providers, or why it cannot be
 * called. `fields` must have passed `storedFieldsProblem`.
 */
export const providerModel = async (slug: ProviderSlug, fields: Fields, modelId: string, fetch: FetchLike): Promise<{ model: LanguageModel } | { problem: string }> => {
  switch (slug) {
    case "direct_a": {
      const { createAnthropic } = await import("@ai-sdk/anthropic")
      return { model: createAnthropic({ baseURL: "https://api.anthropic.com/v1", apiKey: fields.api_key, fetch })(modelId) }
    }
    case "direct_b": {
      const { createOpenAI } = await import("@ai-sdk/openai")
      return { model: createOpenAI({ baseURL: "https://api.openai.com/v1", apiKey: fields.api_key, fetch })(modelId) }
    }
    case "direct_c": {
      const { createGoogleGenerativeAI } = await import("@ai-sdk/google")
      return { model: createGoogleGenerativeAI({ baseURL: "https://generativelanguage.googleapis.com/v1beta", apiKey: fields.api_key, fetch })(modelId) }
    }
    case "cloud_a": {
      const { createAmazonBedrock } = await import("@ai-sdk/amazon-bedrock")
      // An empty apiKey keeps SigV4 with these keys (a set AWS_BEARER_TOKEN_BEDROCK would win otherwise).
      const credentials = { accessKeyId: fields.access_key_id, secretAccessKey: fields.secret_access_key }
      return {
        model: createAmazonBedrock({
          region: fields.region,
          baseURL: `https://bedrock-runtime.${fields.region}.amazonaws.com`,
          apiKey: "",
          credentialProvider: async () => credentials,
          fetch
        })(modelId)
      }
    }
    case "cloud_b": {
      // The deployment is named after the model (docs/decisions.md).
      const { createAzure } = await import("@ai-sdk/azure")
      return {
        model: createAzure({ baseURL: `${fields.endpoint.replace(/\/+$/, "")}/openai`, apiKey: fields.api_key, apiVersion: fields.api_version, useDeploymentBasedUrls: true, fetch })(modelId)
      }
    }
    case "cloud_c": {
      // The server's own Google identity (application default credentials) is never lent to an organization.
      if (fields.service_account_json === undefined) return { problem: "cloud_c needs credentials.service_account_json: the gateway does not call Vertex AI with its own Google identity" }
      const parsed = parseServiceAccount(fields.service_account_json)
      if ("problem" in parsed) return { problem: `credentials.service_account_json ${parsed.problem}` }
      const { createVertex } = await import("@ai-sdk/google-vertex")
      return {
        model: createVertex({
          project: fields.project_id,
          location: fields.region,
          apiKey: "",
          googleAuthOptions: { authClient: tokenClient(parsed.key, fetch) as never },
          fetch
        })(modelId)
      }
    }
  }
}

/** Where a chat-completions POST goes: the endpoint as given, or `{endpoint}/chat/completions`. */
export const chatCompletionsBase = (endpointUrl: string) => {
  const trimmed = endpointUrl.replace(/\/+$/, "")
  return trimmed.endsWith("/chat/completions") ? trimmed.slice(0, -"/chat/completions".length) : trimmed
}

export interface CustomTarget {
  readonly endpointUrl: string
  readonly upstreamModel: string
  readonly authorization: string | undefined
  readonly fetch: FetchLike
}

export const customModel = async (target: CustomTarget): Promise<LanguageModel> => {
  const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible")
  return createOpenAICompatible({
    name: "custom",
    baseURL: chatCompletionsBase(target.endpointUrl),
    ...(target.authorization === undefined ? {} : { headers: { Authorization: target.authorization } }),
    fetch: target.fetch,
    supportsStructuredOutputs: true
  })(target.upstreamModel)
}
