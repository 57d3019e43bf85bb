/**
 * The LLM gateway's settings (CONTRACT-sdk-beyond §6 "Settings"). The gateway's own routes,
 * `/gateway/openai/v1/*` and `/gateway/anthropic/v1/*`, speak the providers' protocols and
 * are not part of this contract.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { NullableTimestamp } from "./common.js"
import { Forbidden, InvalidInput } from "./errors.js"

export const GatewaySettings = Schema.Struct({
  store_details: Schema.Boolean.annotate({ description: "store each call's request body as its action's details (sealed); default false: only a digest" }),
  updated_at: NullableTimestamp
})
export type GatewaySettings = typeof GatewaySettings.Type

export const GatewaySettingsUpdate = Schema.Struct({ store_details: Schema.Boolean })

export class LlmGatewayGroup extends HttpApiGroup.make("llmGateway")
  .add(
    HttpApiEndpoint.get("settings", "/api/v1/gateway/settings", { error: Forbidden, success: GatewaySettings }),
    HttpApiEndpoint.put("updateSettings", "/api/v1/gateway/settings", { error: [Forbidden, InvalidInput], payload: GatewaySettingsUpdate, success: GatewaySettings })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "LLM gateway",
      description:
        "Settings of the OpenAI/Anthropic gateway at `/gateway/openai/v1/*` and `/gateway/anthropic/v1/*` (`X-Aira-Api-Key`): every forwarded call is authorized, then notarized with a receipt."
    })
  )
{}
