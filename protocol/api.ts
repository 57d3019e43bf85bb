/**
 * The whole HTTP API: every group, the API-wide error translation, and the
 * parse options (report every issue, ignore unknown fields).
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { AdminGroup, ApiKeysGroup, AuthGroup, TeamGroup } from "./accounts.js"
import { ErrorShape } from "./auth.js"
import { SystemGroup } from "./system.js"

export class GatewayApi extends HttpApi.make("gateway")
  .add(SystemGroup, AuthGroup, TeamGroup, ApiKeysGroup, AdminGroup)
  .middleware(ErrorShape)
  .annotate(HttpApi.ParseOptions, { errors: "all", onExcessProperty: "ignore" })
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({
      title: "Agent Accountability Gateway",
      version: "1.1.0",
      description:
        "Agents authorize intents, notarize outcomes and receive Ed25519-signed receipts verifiable offline. Every JSON object response carries `request_id`; errors carry `code` and `message`."
    })
  )
{}
