/**
 * The service as one Layer: storage, Redis (or its stand-ins), secrets,
 * access, the areas' services and handlers, the HttpApi, and the uWS server.
 */
import { NodeHttpServer } from "@effect/platform-node"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../protocol/api.js"
import {
  AdminKeyLive,
  AuthenticatedLive,
  ErrorShapeLive,
  OptionallyAuthenticatedLive,
  PublicRouteLive
} from "./access/middleware.js"
import { Access } from "./access/service.js"
import { AccountsHttp } from "./accounts/http.js"
import { Accounts } from "./accounts/service.js"
import { type AppConfig, configLayer } from "./config.js"
import { uwsServerLayer } from "./gateway/server.js"
import { databaseLayer } from "./platform/db/index.js"
import { platformRedisLayer } from "./platform/redis/index.js"
import { Secrets } from "./platform/secrets.js"
import { SystemHttp } from "./system/http.js"
import { Events } from "./events/service.js"

/** Everything below the HTTP layer; tests and benchmarks may build on it directly. */
export const servicesLayer = (config: AppConfig) => {
  const infrastructure = Layer.mergeAll(
    configLayer(config),
    databaseLayer({ url: config.databaseUrl, dataDir: config.dataDir, ci: config.ci }),
    platformRedisLayer(config.redisUrl)
  )
  return Layer.mergeAll(Accounts.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(Access.layer, Events.layer)),
    Layer.provideMerge(Secrets.layer),
    Layer.provideMerge(infrastructure)
  )
}

const handlers = Layer.mergeAll(SystemHttp, AccountsHttp)
const middleware = Layer.mergeAll(AuthenticatedLive, PublicRouteLive, OptionallyAuthenticatedLive, AdminKeyLive, ErrorShapeLive)

export const apiRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(GatewayApi, { openapiPath: "/api/v1/openapi.json" }).pipe(Layer.provide(handlers), Layer.provide(middleware)),
  HttpApiScalar.layer(GatewayApi, { path: "/docs" })
)

export const appLayer = (config: AppConfig) =>
  HttpRouter.serve(apiRoutes, { disableLogger: true }).pipe(
    Layer.provide(
      uwsServerLayer({
        host: config.host,
        port: config.port,
        maxJsonBodyBytes: config.maxJsonBodyBytes,
        maxMultipartBodyBytes: config.maxMultipartBodyBytes,
        bodyTimeoutMs: config.bodyTimeoutMs,
        maxConnections: config.maxConnections,
        shutdownGraceMs: config.shutdownGraceMs
      })
    ),
    Layer.provide(servicesLayer(config)),
    // File system, paths and ETags for static and multipart bodies (no Node HTTP server involved).
    Layer.provide(NodeHttpServer.layerHttpServices)
  )
