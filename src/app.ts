/**
 * The service as one Layer: storage, Redis (or its stand-ins), secrets,
 * access, the areas' services and handlers, the HttpApi, and the uWS server.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpApiBuilder } from "effect/http-api"
import * as Layer from "effect/Layer"
import { actorsLayer } from "../actors/runner.js"
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
import { actionCommitsLayer } from "./actions/commits.js"
import { ApprovalGrantsLive } from "./actions/grants.js"
import { ActionsHttp } from "./actions/http.js"
import { Actions } from "./actions/service.js"
import { AdminHttp } from "./admin/http.js"
import { AgentsHttp, AgentsPublicHttp } from "./agents/http.js"
import { Agents } from "./agents/service.js"
import { AnalyticsHttp } from "./analytics/http.js"
import { Analytics } from "./analytics/service.js"
import { ApprovalPageRoutes } from "./approve/http.js"
import { NotificationChannelsHttp } from "./approvers/http.js"
import { CasesHttp, CasesPublicHttp } from "./cases/http.js"
import { CaseReceiptsLookup } from "./cases/receipt-lookup.js"
import { Cases } from "./cases/service.js"
import { ChatHttp } from "./chat/http.js"
import { Chat } from "./chat/service.js"
import { CodeReviewHttp } from "./code-review/http.js"
import { CodeReviewJobs } from "./code-review/jobs.js"
import { CodeReview } from "./code-review/service.js"
import { GITHUB_WEBHOOK_PATH, GithubWebhookRoutes, MAX_DELIVERY_BYTES } from "./code-review/webhook.js"
import { ComplianceBundlesHttp } from "./compliance/bundles-http.js"
import { ComplianceBundles } from "./compliance/bundles-service.js"
import { ComplianceHttp } from "./compliance/http.js"
import { Compliance } from "./compliance/service.js"
import { CredentialsHttp, CredentialsPublicHttp } from "./credentials/http.js"
import { Credentials } from "./credentials/service.js"
import { DashboardRoutes } from "./dashboard/http.js"
import { DidsHttp, DidsPublicHttp } from "./dids/http.js"
import { Dids } from "./dids/service.js"
import { docsRoutes } from "./docs/http.js"
import { DoraEnabledLive, DoraHttp } from "./dora/http.js"
import { Dora } from "./dora/service.js"
import { DriftHttp } from "./drift/http.js"
import { Drift } from "./drift/service.js"
import { EscrowHttp } from "./escrow/http.js"
import { Escrow } from "./escrow/service.js"
import { EstateHttp } from "./estate/http.js"
import { Estate } from "./estate/service.js"
import { Events } from "./events/service.js"
import { EvidenceHttp } from "./evidence/http.js"
import { Evidence } from "./evidence/service.js"
import { ExplanationsHttp, ExplanationsPublicHttp } from "./explanations/http.js"
import { Explanations } from "./explanations/service.js"
import { FlagsAdminHttp, FlagsHttp } from "./flags/http.js"
import { Flags } from "./flags/service.js"
import type { AnyApi } from "./gateway/compiled/effect-internals.js"
import { type CompiledRoutes, compiledRoutesLayer } from "./gateway/compiled/routes.js"
import { RouteLabel } from "./gateway/observe.js"
import { UwsApp, uwsServerLayer } from "./gateway/server.js"
import { LlmGatewayHttp } from "./llm-gateway/http.js"
import { LlmGatewayRoutes } from "./llm-gateway/server.js"
import { LlmGateway } from "./llm-gateway/service.js"
import { McpRoutes } from "./mcp/http.js"
import { ModelCalls } from "./models/calls.js"
import { CustomModels } from "./models/custom.js"
import { CustomModelsHttp, ModelPreferencesHttp, ModelsHttp } from "./models/http.js"
import { Models } from "./models/service.js"
import { MutualSignHttp, MutualSignPublicHttp } from "./mutual-signing/http.js"
import { MutualSigning } from "./mutual-signing/service.js"
import { NotificationsHttp } from "./notifications/http.js"
import { Notifications } from "./notifications/service.js"
import { OutputPoliciesHttp } from "./output-policies/http.js"
import { outputPoliciesLayer } from "./output-policies/service.js"
import { type AppConfig, configLayer } from "./platform/config.js"
import { databaseLayer } from "./platform/db/index.js"
import { loggerLayer } from "./platform/log.js"
import { platformRedisLayer } from "./platform/redis/index.js"
import { Secrets } from "./platform/secrets.js"
import { SelfCalls } from "./platform/self-calls.js"
import { UsageMeter } from "./platform/usage.js"
import { PoliciesHttp } from "./policies/http.js"
import { policiesLayer } from "./policies/service.js"
import { ProviderCredentialsHttp } from "./provider-credentials/http.js"
import { ProviderCredentials } from "./provider-credentials/service.js"
import { ReceiptsHttp } from "./receipts/http.js"
import { receiptsLayer } from "./receipts/service.js"
import { ReputationHttp } from "./reputation/http.js"
import { reputationLayer } from "./reputation/service.js"
import { SanitizeFilesHttp, SanitizeFilesPublicHttp } from "./sanitize/files/http.js"
import { SanitizeFiles } from "./sanitize/files/service.js"
import { SanitizeHttp } from "./sanitize/http.js"
import { Sanitize } from "./sanitize/service.js"
import { SettlementsHttp } from "./settlements/http.js"
import { Settlements } from "./settlements/service.js"
import { SsoHttp } from "./sso/http.js"
import { Sso } from "./sso/service.js"
import { SystemHttp } from "./system/http.js"
import { MetricsListener } from "./system/metrics-listener.js"
import { WebhooksHttp } from "./webhooks/http.js"
import { webhooksLayer } from "./webhooks/service.js"
import { WhitelistHttp } from "./whitelist/http.js"
import { whitelistLayer } from "./whitelist/service.js"
import { SocketsLive } from "./ws/server.js"

/** Everything below the HTTP layer; tests and benchmarks may build on it directly. */
export const servicesLayer = (config: AppConfig) => {
  const infrastructure = Layer.mergeAll(
    configLayer(config),
    databaseLayer({ url: config.databaseUrl, dataDir: config.dataDir, ci: config.ci, maxConnections: config.databaseMaxConnections }),
    platformRedisLayer(config.redisUrl, { keyPrefix: config.redisKeyPrefix, ci: config.ci })
  )
  return Layer.mergeAll(Accounts.layer, policiesLayer, whitelistLayer, outputPoliciesLayer, Analytics.layer, webhooksLayer, Agents.layer, Settlements.layer, Evidence.layer, Escrow.layer, Estate.layer, Sanitize.layer, SanitizeFiles.layer, Drift.layer, Compliance.layer, ComplianceBundles.layer, Dora.layer).pipe(
    // Reputation: below the agents registry (decommissions record a snapshot), above DIDs (it resolves them).
    Layer.provideMerge(reputationLayer),
    Layer.provideMerge(Layer.mergeAll(Dids.layer, Credentials.layer, Explanations.layer)),
    (services) => Layer.provideMerge(Layer.mergeAll(Models.layer, CustomModels.layer), services),
    // Code review reads the code review model preferences.
    (services) => Layer.provideMerge(CodeReview.layer, services),
    (services) => Layer.provideMerge(Chat.layer, services),
    (services) => Layer.provideMerge(Cases.layer, services),
    (services) => Layer.provideMerge(Actions.live, services),
    (services) => Layer.provideMerge(Notifications.layer, services),
    (services) => Layer.provideMerge(MutualSigning.layer, services),
    // The LLM gateway authorizes and notarizes through Actions.
    (services) => Layer.provideMerge(LlmGateway.layer, services),
    // Code review jobs authorize and notarize through Actions.
    (services) => Layer.provideMerge(CodeReviewJobs.layer, services),
    Layer.provideMerge(actorsLayer(config)),
    Layer.provideMerge(actionCommitsLayer),
    Layer.provideMerge(Layer.mergeAll(Access.layer, Events.layer, receiptsLayer, ApprovalGrantsLive, Sso.layer, CaseReceiptsLookup)),
    Layer.provideMerge(ModelCalls.layer.pipe(Layer.provideMerge(ProviderCredentials.layer))),
    Layer.provideMerge(Flags.layer),
    Layer.provideMerge(Layer.mergeAll(Secrets.layer, SelfCalls.layer, UsageMeter.layer())),
    Layer.provideMerge(infrastructure)
  )
}

const handlers = Layer.mergeAll(SystemHttp, AccountsHttp, AdminHttp, ActionsHttp, ReceiptsHttp, PoliciesHttp, AgentsHttp, AgentsPublicHttp, DidsHttp, DidsPublicHttp, CredentialsHttp, CredentialsPublicHttp, MutualSignHttp, MutualSignPublicHttp, ProviderCredentialsHttp, ModelsHttp, ModelPreferencesHttp, CustomModelsHttp, CasesHttp, CasesPublicHttp, SettlementsHttp, WhitelistHttp, OutputPoliciesHttp, AnalyticsHttp, WebhooksHttp, NotificationChannelsHttp, NotificationsHttp, EvidenceHttp, ExplanationsHttp, ExplanationsPublicHttp, EscrowHttp, EstateHttp, SanitizeHttp, SanitizeFilesHttp, SanitizeFilesPublicHttp, FlagsHttp, FlagsAdminHttp, DriftHttp, SsoHttp, DoraHttp, ComplianceHttp, ComplianceBundlesHttp, ReputationHttp, LlmGatewayHttp, ChatHttp, CodeReviewHttp)
const middleware = Layer.mergeAll(AuthenticatedLive, PublicRouteLive, OptionallyAuthenticatedLive, AdminKeyLive, ErrorShapeLive, DoraEnabledLive)

/** Every route labels its request with its template (metrics and log lines). */
export const apiRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(GatewayApi, { openapiPath: "/api/v1/openapi.json" }).pipe(Layer.provide(handlers), Layer.provide(middleware)),
  docsRoutes(GatewayApi),
  ApprovalPageRoutes,
  DashboardRoutes,
  McpRoutes,
  GithubWebhookRoutes
).pipe(Layer.provide(RouteLabel))

const SANITIZE_BODY_BYTES = 3_500_000
const EXPLANATION_VERIFY_BYTES = 1024 * 1024

const serverOptions = (config: AppConfig) => ({
  host: config.host,
  port: config.port,
  maxJsonBodyBytes: config.maxJsonBodyBytes,
  // 500,000 characters of sanitize content: as JSON a character takes up to 6 bytes (a \u escape).
  largeJsonBodies: [
    { pathPrefix: "/api/v1/sanitize", maxBytes: Math.max(config.maxJsonBodyBytes, SANITIZE_BODY_BYTES) },
    // CONTRACT: a verify body over 1 MiB is a 413 whatever MAX_BODY_BYTES says.
    { pathPrefix: "/api/v1/verify/explanation", maxBytes: EXPLANATION_VERIFY_BYTES },
    // CONTRACT: a GitHub delivery over 1 MiB is a 413.
    { pathPrefix: GITHUB_WEBHOOK_PATH, maxBytes: MAX_DELIVERY_BYTES }
  ],
  maxMultipartBodyBytes: config.maxMultipartBodyBytes,
  bodyTimeoutMs: config.bodyTimeoutMs,
  bodyIdleTimeoutMs: config.bodyIdleTimeoutMs,
  maxConnections: config.maxConnections,
  shutdownGraceMs: config.shutdownGraceMs
})

/** Every endpoint on its own native uWS route (the router above serves what uWS does not match). */
const compiledRoutes = compiledRoutesLayer(GatewayApi as unknown as AnyApi).pipe(
  Layer.provide(handlers),
  Layer.provide(middleware)
  // The handlers' per-request requirements (SqlClient and the like) are in the app's context, as for the router.
) as unknown as Layer.Layer<CompiledRoutes, never, UwsApp>

const served = Layer.mergeAll(HttpRouter.serve(apiRoutes, { disableLogger: true }), compiledRoutes, SocketsLive, MetricsListener.layer, LlmGatewayRoutes)

/**
 * PORT=0 (tests): the server binds first, on a port the system chooses, and the
 * services are built with that port, and with the BASE_URL derived from it
 * unless BASE_URL was set.
 */
const onChosenPort = (config: AppConfig) =>
  Layer.unwrap(
    Effect.map(UwsApp, ({ port }) => {
      const derived = config.baseUrl === `http://${config.host}:0`
      const bound: AppConfig = { ...config, port, baseUrl: derived ? `http://${config.host}:${port}` : config.baseUrl }
      return served.pipe(Layer.provideMerge(servicesLayer(bound)))
    })
  ).pipe(Layer.provide(uwsServerLayer(serverOptions(config))))

export const appLayer = (config: AppConfig) =>
  (config.port === 0
    ? onChosenPort(config)
    : served.pipe(
        Layer.provide(uwsServerLayer(serverOptions(config))),
        // Merged, not only provided: tests and tools reach the services of a running server through its context.
        Layer.provideMerge(servicesLayer(config))
      )
  ).pipe(
    // File system, paths and ETags for static and multipart bodies (no Node HTTP server involved).
    Layer.provide(NodeHttpServer.layerHttpServices),
    // Effect's log lines (start-up, background fibers) in the request log's JSON shape.
    Layer.provide(loggerLayer)
  )
