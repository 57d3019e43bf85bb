/** Handlers of `/api/v1/agents*` (scopes agents:read / agents:write; decommissioning needs owner or admin). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { requireRole, requireScope } from "../access/guards.js"
import { Actions } from "../actions/service.js"
import { requestIdOf } from "../gateway/request.js"
import { refusals } from "../platform/wire-errors.js"
import { Agents } from "./service.js"

const findErrors = refusals("AgentsError", "AgentNotFound")

const auditContext = Effect.gen(function* () {
  return { requestId: requestIdOf(yield* HttpServerRequest) }
})

export const AgentsHttp = HttpApiBuilder.group(GatewayApi, "agents", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* Agents
    const actions = yield* Actions
    const read = requireScope("agents:read")
    /** The writer first (a refused caller learns nothing), then the request id for the audit entry. */
    const writer = Effect.all([requireScope("agents:write"), auditContext])
    // Irreversible: only the organization's owner or admins.
    const decommissioner = Effect.all([Effect.flatMap(requireScope("agents:write"), requireRole(["owner", "admin"], "decommissioning agents")), auditContext])
    return handlers
      .handle("register", ({ payload }) => Effect.flatMap(writer, ([principal, context]) => agents.register(principal, payload, context).pipe(refusals("AgentsError", "InvalidSlug", "SlugTaken", "InvalidInput"))))
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => agents.list(principal, query)))
      .handle("get", ({ params }) => Effect.flatMap(read, (principal) => agents.get(principal, params.agent_slug).pipe(findErrors)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(writer, ([principal, context]) => agents.update(principal, params.agent_slug, payload, context).pipe(refusals("AgentsError", "AgentNotFound", "InvalidInput")))
      )
      .handle("publishVersion", ({ params, payload }) =>
        Effect.flatMap(writer, ([principal, context]) => agents.publishVersion(principal, params.agent_slug, payload, context).pipe(refusals("AgentsError", "AgentNotFound", "AgentVersionExists", "DecommissionedAgent")))
      )
      .handle("versions", ({ params }) => Effect.flatMap(read, (principal) => agents.versions(principal, params.agent_slug).pipe(findErrors)))
      .handle("decommission", ({ params, payload }) =>
        Effect.flatMap(decommissioner, ([principal, context]) =>
          agents.decommission(principal, params.agent_slug, payload.reason ?? null, context).pipe(refusals("AgentsError", "AgentNotFound", "DecommissionedAgent"))
        )
      )
      .handle("transfer", ({ params, payload }) =>
        Effect.gen(function* () {
          const [principal, context] = yield* decommissioner
          // The owner's signature is keyed by the credential this request carries (src/agents/transfer.ts).
          const credential = ((yield* HttpServerRequest).headers.authorization ?? "").replace(/^Bearer\s+/i, "")
          return yield* agents
            .transfer(principal, params.agent_slug, payload, credential, context)
            .pipe(refusals("AgentsError", "AgentNotFound", "DecommissionedAgent", "InvalidTransferSignature", "TargetOrgNotFound", "InvalidInput"))
        })
      )
      .handle("actions", ({ params, query }) =>
        Effect.gen(function* () {
          const principal = yield* read
          const slug = yield* agents.owned(principal, params.agent_slug).pipe(findErrors)
          const filter = {
            agent_id: slug,
            ...(query.action_type !== undefined ? { action_type: query.action_type } : {}),
            ...(query.status !== undefined ? { status: query.status } : {})
          }
          return yield* actions.list(principal, filter, query.page ?? 1, query.per_page ?? 20)
        })
      )
  })
)

export const AgentsPublicHttp = HttpApiBuilder.group(GatewayApi, "agentsPublic", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* Agents
    return handlers.handle("publicAgent", ({ params }) => agents.publicView(params.agent_slug).pipe(findErrors))
  })
)
