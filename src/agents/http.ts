/** Handlers of `/api/v1/agents*` (scopes agents:read / agents:write; decommissioning needs owner or admin). */
import * as Effect from "effect/Effect"
import { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { BadRequest, Conflict, NotFound, Unprocessable } from "../../protocol/errors.js"
import { requireRole, requireScope } from "../access/guards.js"
import { Actions } from "../actions/service.js"
import { requestIdOf } from "../gateway/request.js"
import { answer } from "../platform/wire-errors.js"
import { Agents } from "./service.js"

const registerErrors = answer({ InvalidSlug: BadRequest, SlugTaken: Conflict, InvalidInput: Unprocessable })
const findErrors = answer({ AgentNotFound: NotFound })
const updateErrors = answer({ AgentNotFound: NotFound, InvalidInput: Unprocessable })
const publishErrors = answer({ AgentNotFound: NotFound, VersionExists: Conflict, AgentDecommissioned: Unprocessable })
const transferErrors = answer({ AgentNotFound: NotFound, AgentDecommissioned: Unprocessable, InvalidSignature: BadRequest, TargetOrgNotFound: NotFound, InvalidInput: Unprocessable })
const decommissionErrors = answer({ AgentNotFound: NotFound, AgentDecommissioned: Unprocessable })

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
      .handle("register", ({ payload }) => Effect.flatMap(writer, ([principal, context]) => registerErrors(agents.register(principal, payload, context))))
      .handle("list", ({ query }) => Effect.flatMap(read, (principal) => agents.list(principal, query)))
      .handle("get", ({ params }) => Effect.flatMap(read, (principal) => findErrors(agents.get(principal, params.agent_slug))))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(writer, ([principal, context]) => updateErrors(agents.update(principal, params.agent_slug, payload, context)))
      )
      .handle("publishVersion", ({ params, payload }) =>
        Effect.flatMap(writer, ([principal, context]) => publishErrors(agents.publishVersion(principal, params.agent_slug, payload, context)))
      )
      .handle("versions", ({ params }) => Effect.flatMap(read, (principal) => findErrors(agents.versions(principal, params.agent_slug))))
      .handle("decommission", ({ params, payload }) =>
        Effect.flatMap(decommissioner, ([principal, context]) =>
          decommissionErrors(agents.decommission(principal, params.agent_slug, payload.reason, context))
        )
      )
      .handle("transfer", ({ params, payload }) =>
        Effect.gen(function* () {
          const [principal, context] = yield* decommissioner
          // The owner's signature is keyed by the credential this request carries (src/agents/transfer.ts).
          const credential = ((yield* HttpServerRequest).headers.authorization ?? "").replace(/^Bearer\s+/i, "")
          return yield* transferErrors(agents.transfer(principal, params.agent_slug, payload, credential, context))
        })
      )
      .handle("actions", ({ params, query }) =>
        Effect.gen(function* () {
          const principal = yield* read
          const slug = yield* findErrors(agents.owned(principal, params.agent_slug))
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
    return handlers.handle("publicAgent", ({ params }) => findErrors(agents.publicView(params.agent_slug)))
  })
)
