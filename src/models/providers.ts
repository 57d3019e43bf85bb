/**
 * AI SDK language models for the spec's provider slugs (docs/decisions.md "Model layer"):
 * direct_a Anthropic, direct_b OpenAI, direct_c Google; cloud_a Amazon Bedrock, cloud_b Azure
 * OpenAI, cloud_c Google Vertex AI; custom endpoints through the OpenAI-compatible provider.
 * Vendor hosts are called with the SDK's own fetch; custom endpoints only through the outbound
 * client (`customFetch`).
 */
import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock"
import { createAnthropic } from "@ai-sdk/anthropic"
import { createAzure } from "@ai-sdk/azure"
import { createGoogleGenerativeAI } from "@ai-sdk/google"
import { createVertex } from "@ai-sdk/google-vertex"
import { createOpenAI } from "@ai-sdk/openai"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import type { LanguageModel } from "ai"
import type { ProviderSlug } from "../../protocol/provider-credentials.js"
import type { FetchLike } from "../platform/outbound/index.js"

type Fields = Readonly<Record<string, string>>

/** A built-in model through one of the organization's configured providers. */
export const providerModel = (slug: ProviderSlug, fields: Fields, modelId: string): LanguageModel => {
  switch (slug) {
    case "direct_a":
      return createAnthropic({ apiKey: fields.api_key })(modelId)
    case "direct_b":
      return createOpenAI({ apiKey: fields.api_key })(modelId)
    case "direct_c":
      return createGoogleGenerativeAI({ apiKey: fields.api_key })(modelId)
    case "cloud_a":
      return createAmazonBedrock({ region: fields.region, accessKeyId: fields.access_key_id, secretAccessKey: fields.secret_access_key })(modelId)
    case "cloud_b":
      // The deployment is named after the model (docs/decisions.md).
      return createAzure({ baseURL: `${fields.endpoint.replace(/\/+$/, "")}/openai`, apiKey: fields.api_key, apiVersion: fields.api_version, useDeploymentBasedUrls: true })(modelId)
    case "cloud_c":
      return createVertex({
        project: fields.project_id,
        location: fields.region,
        ...(fields.service_account_json ? { googleAuthOptions: { credentials: JSON.parse(fields.service_account_json) } } : {})
      })(modelId)
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

export const customModel = (target: CustomTarget): LanguageModel =>
  createOpenAICompatible({
    name: "custom",
    baseURL: chatCompletionsBase(target.endpointUrl),
    ...(target.authorization === undefined ? {} : { headers: { Authorization: target.authorization } }),
    fetch: target.fetch,
    supportsStructuredOutputs: true
  })(target.upstreamModel)
