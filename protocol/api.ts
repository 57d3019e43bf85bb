/**
 * The whole HTTP API: every group, the API-wide error translation, and the
 * parse options (report every issue, ignore unknown fields).
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { ApiKeysGroup, AuthGroup, TeamGroup } from "./accounts.js"
import { ActionApprovalsGroup, ActionsGroup } from "./actions.js"
import { AdminGroup } from "./admin.js"
import { AgentsGroup, AgentsPublicGroup } from "./agents.js"
import { AnalyticsGroup } from "./analytics.js"
import { NotificationChannelsGroup } from "./approvers.js"
import { ErrorShape } from "./auth.js"
import { CasesGroup, CasesPublicGroup } from "./cases.js"
import { ChatGroup } from "./chat.js"
import { CodeReviewGroup } from "./code-review.js"
import { ComplianceGroup } from "./compliance.js"
import { ComplianceBundlesGroup } from "./compliance-bundles.js"
import { CredentialsGroup, CredentialsPublicGroup } from "./credentials.js"
import { DidsGroup, DidsPublicGroup } from "./dids.js"
import { DoraGroup } from "./dora.js"
import { DriftGroup } from "./drift.js"
import { EscrowGroup } from "./escrow.js"
import { EstateGroup } from "./estate.js"
import { EvidenceGroup } from "./evidence.js"
import { ExplanationsGroup, ExplanationsPublicGroup } from "./explanations.js"
import { FlagsAdminGroup, FlagsGroup } from "./flags.js"
import { LlmGatewayGroup } from "./llm-gateway.js"
import { CustomModelsGroup, ModelPreferencesGroup, ModelsGroup } from "./models.js"
import { MutualSignGroup, MutualSignPublicGroup } from "./mutual-signing.js"
import { NotificationsGroup } from "./notifications.js"
import { completeOpenApi } from "./openapi.js"
import { OutputPoliciesGroup } from "./output-policies.js"
import { PoliciesGroup } from "./policies.js"
import { ProviderCredentialsGroup } from "./provider-credentials.js"
import { ReceiptsGroup, ReceiptsPublicGroup } from "./receipts.js"
import { ReputationGroup } from "./reputation.js"
import { SanitizeGroup } from "./sanitize.js"
import { SanitizeFilesGroup, SanitizeFilesPublicGroup } from "./sanitize-files.js"
import { SettlementsGroup } from "./settlements.js"
import { SsoGroup, SsoPublicGroup } from "./sso.js"
import { SystemGroup } from "./system.js"
import { WebhooksGroup } from "./webhooks.js"
import { WhitelistGroup } from "./whitelist.js"

export class GatewayApi extends HttpApi.make("gateway")
  .add(SystemGroup, AuthGroup, TeamGroup, ApiKeysGroup, AdminGroup, ActionApprovalsGroup, ActionsGroup, ReceiptsPublicGroup, ReceiptsGroup, PoliciesGroup, AgentsPublicGroup, AgentsGroup, DidsPublicGroup, DidsGroup, CredentialsPublicGroup, CredentialsGroup, MutualSignPublicGroup, MutualSignGroup, ProviderCredentialsGroup, ModelsGroup, ModelPreferencesGroup, CustomModelsGroup, CasesGroup, CasesPublicGroup, SettlementsGroup, WhitelistGroup, OutputPoliciesGroup, AnalyticsGroup, WebhooksGroup, NotificationChannelsGroup, NotificationsGroup, EvidenceGroup, ExplanationsGroup, ExplanationsPublicGroup, EscrowGroup, EstateGroup, SanitizeGroup, SanitizeFilesGroup, SanitizeFilesPublicGroup, FlagsGroup, FlagsAdminGroup, DriftGroup, SsoPublicGroup, SsoGroup, DoraGroup, ComplianceGroup, ComplianceBundlesGroup, ReputationGroup, ChatGroup, LlmGatewayGroup, CodeReviewGroup)
  .middleware(ErrorShape)
  .annotate(HttpApi.ParseOptions, { errors: "all", onExcessProperty: "ignore" })
  .annotate(HttpApi.HeadersParseOptions, {})
  .annotateMerge(
    OpenApi.annotations({
      title: "Agent Accountability Gateway",
      version: "1.1.0",
      description:
        "Agents authorize intents, notarize outcomes and receive Ed25519-signed receipts verifiable offline. Every JSON object response carries `request_id`; errors carry `code` and `message`.",
      transform: completeOpenApi
    })
  )
{}
