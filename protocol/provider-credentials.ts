/**
 * Organization-level model provider credentials (spec 002 "Provider credentials"): secrets are
 * encrypted at rest and never returned; each POST merges into the stored configuration.
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { Forbidden, InvalidInput } from "./errors.js"

/** The spec's neutral provider slugs; each has its credential type. */
export const PROVIDER_TYPES = {
  direct_a: "api_key",
  direct_b: "api_key",
  direct_c: "api_key",
  cloud_a: "cloud_a",
  cloud_b: "cloud_b",
  cloud_c: "cloud_c"
} as const
export type ProviderSlug = keyof typeof PROVIDER_TYPES
export const PROVIDER_SLUGS = Object.keys(PROVIDER_TYPES) as ReadonlyArray<ProviderSlug>

export const ProviderStatus = Schema.Struct({
  slug: Schema.String,
  type: Schema.String,
  configured: Schema.Boolean,
  region: Schema.NullOr(Schema.String),
  endpoint: Schema.NullOr(Schema.String)
})
export type ProviderStatus = typeof ProviderStatus.Type

const Message = Schema.Struct({ message: Schema.String })

export class ProviderCredentialsGroup extends HttpApiGroup.make("providerCredentials")
  .add(
    HttpApiEndpoint.post("save", "/api/v1/provider-credentials", { error: [Forbidden, InvalidInput],
      payload: Schema.Struct({
        provider: Schema.String.annotate({ description: PROVIDER_SLUGS.join(", ") }),
        credentials: Schema.Record(Schema.String, Schema.Unknown)
      }),
      success: Message
    }),
    HttpApiEndpoint.get("list", "/api/v1/provider-credentials", { error: Forbidden, success: Schema.Struct({ providers: Schema.Array(ProviderStatus) }) }),
    HttpApiEndpoint.delete("remove", "/api/v1/provider-credentials", { error: [Forbidden, InvalidInput],
      query: { provider: Schema.String },
      success: Message
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Provider credentials",
      description:
        "Bring your own model provider accounts: `direct_a..c` take `{api_key}`; `cloud_a` `{access_key_id, secret_access_key, region}`; `cloud_b` `{endpoint, api_key, api_version}`; `cloud_c` `{project_id, region, service_account_json}`. Secrets are never returned."
    })
  )
{}
