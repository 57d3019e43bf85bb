/**
 * Registers every endpoint of the HttpApi as its own native uWS route, compiled once
 * (endpoint.ts). The HttpApi stays the one definition: the handlers are the groups'
 * (`HttpApiBuilder.group` layers), the router-served copy of the API stays behind the
 * transport's catch-all for what uWS does not match (percent-encoded or mixed-case
 * paths, HEAD, trailing slashes), and OpenAPI is generated from the same definition.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { logLine } from "../../platform/log.js"
import { UwsApp } from "../server.js"
import { type AnyApi, assertInternals, type GroupService } from "./effect-internals.js"
import { type CompiledEndpoint, compileEndpoint } from "./endpoint.js"

/** What was compiled, for the start-up log and the tests. */
export interface CompiledSummary {
  /** Endpoints running the compiled program. */
  readonly compiled: number
  /** Endpoints on a native route running HttpApiBuilder's own program (streams, multipart, …). */
  readonly delegated: number
  /** `METHOD path` of the endpoints left to the catch-all (paths uWS cannot express). */
  readonly skipped: ReadonlyArray<string>
  /** Requests the native routes have started so far. */
  readonly started: () => number
}

export class CompiledRoutes extends Context.Service<CompiledRoutes, CompiledSummary>()("gateway/CompiledRoutes") {}

/** Compiles every endpoint of `api` whose group service is in `context`. */
export const compileApi = (api: AnyApi, context: Context.Context<never>) => {
  assertInternals()
  const endpoints: CompiledEndpoint[] = []
  const skipped: string[] = []
  for (const group of Object.values(api.groups)) {
    const service = context.mapUnsafe.get(group.key) as GroupService | undefined
    if (service === undefined) throw new Error(`HttpApiGroup "${group.identifier}" has no handlers in the app's context`)
    for (const runtime of service.handlers.values()) {
      const endpoint = runtime.endpoint
      const route = service.routes.find((candidate) => candidate.method === endpoint.method && candidate.path === endpoint.path)
      const compiled = compileEndpoint(api, group, runtime, route, context)
      if (compiled === undefined) skipped.push(`${endpoint.method} ${endpoint.path}`)
      else endpoints.push(compiled)
    }
  }
  return { endpoints, skipped }
}

/** The layer that serves `api` on native routes; it needs the groups' handler layers and the app's services. */
export const compiledRoutesLayer = (api: AnyApi) =>
  Layer.effect(CompiledRoutes)(
    Effect.gen(function* () {
      const uws = yield* UwsApp
      // No tracer is configured: spans (Effect.fn, SQL statements) would be built for nobody on every request.
      const context = Context.add(yield* Effect.context<never>(), References.TracerEnabled, false)
      const { endpoints, skipped } = compileApi(api, context)
      for (const endpoint of endpoints) {
        uws.serveNative({ ...endpoint, label: endpoint.pattern, context })
      }
      const summary: CompiledSummary = {
        compiled: endpoints.filter((endpoint) => !endpoint.delegated).length,
        delegated: endpoints.filter((endpoint) => endpoint.delegated).length,
        skipped,
        started: uws.nativeStarted
      }
      logLine("debug", "compiled routes", { compiled: summary.compiled, delegated: summary.delegated, skipped })
      return summary
    })
  )
