/**
 * Every schema migration, in order. The key is "<number>_<name>"; the number
 * is what the migrator records, so never renumber a migration or change what
 * a shipped one does — append a new file and a new line here instead.
 */
import type { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import accounts from "./0001_accounts.js"
import events from "./0002_events.js"
import receipts from "./0003_receipts.js"
import actions from "./0004_actions.js"
import policies from "./0005_policies.js"
import webhooks from "./0006_webhooks.js"
import notifications from "./0007_notifications.js"
import approvalGrants from "./0008_approval_grants.js"
import inviteCodeHash from "./0009_invite_code_hash.js"
import eventsNotify from "./0010_events_notify.js"
import agents from "./0011_agents.js"
import agentIdentity from "./0012_agent_identity.js"
import agentTransfers from "./0013_agent_transfers.js"
import providerCredentials from "./0014_provider_credentials.js"
import modelPreferences from "./0015_model_preferences.js"
import customModels from "./0016_custom_models.js"
import cases from "./0017_cases.js"
import evidence from "./0018_evidence.js"
import escrow from "./0019_escrow.js"
import estate from "./0020_estate.js"
import settlements from "./0021_settlements.js"
import sanitizedFiles from "./0023_sanitized_files.js"
import featureFlags from "./0024_feature_flags.js"
import drift from "./0025_drift.js"
import sso from "./0026_sso.js"
import explanations from "./0027_explanations.js"
import compliance from "./0028_compliance.js"
import dora from "./0029_dora.js"
import fourEyes from "./0030_four_eyes.js"
import endpointGrants from "./0031_endpoint_grants.js"
import commitGuard from "./0032_commit_guard.js"
import actionsListIndexes from "./0033_actions_list_indexes.js"
import eventsWanted from "./0034_events_wanted.js"
import newIdFunction from "./0035_new_id.js"
import orgSnapshotVersions from "./0036_org_snapshot_versions.js"
import replayContext from "./0037_replay_context.js"
import reputation from "./0038_reputation.js"
import complianceBundles from "./0039_compliance_bundles.js"
import sdkTolerant from "./0040_sdk_tolerant.js"
import llmGateway from "./0041_llm_gateway.js"
import codeReviewGithub from "./0042_code_review_github.js"
import codeReviews from "./0043_code_reviews.js"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_accounts": accounts,
  "0002_events": events,
  "0003_receipts": receipts,
  "0004_actions": actions,
  "0005_policies": policies,
  "0006_webhooks": webhooks,
  "0007_notifications": notifications,
  "0008_approval_grants": approvalGrants,
  "0009_invite_code_hash": inviteCodeHash,
  "0010_events_notify": eventsNotify,
  "0011_agents": agents,
  "0012_agent_identity": agentIdentity,
  "0013_agent_transfers": agentTransfers,
  "0014_provider_credentials": providerCredentials,
  "0015_model_preferences": modelPreferences,
  "0016_custom_models": customModels,
  "0017_cases": cases,
  "0018_evidence": evidence,
  "0019_escrow": escrow,
  "0020_estate": estate,
  "0021_settlements": settlements,
  "0023_sanitized_files": sanitizedFiles,
  "0024_feature_flags": featureFlags,
  "0025_drift": drift,
  "0026_sso": sso,
  "0027_explanations": explanations,
  "0028_compliance": compliance,
  "0029_dora": dora,
  "0030_four_eyes": fourEyes,
  "0031_endpoint_grants": endpointGrants,
  "0032_commit_guard": commitGuard,
  "0033_actions_list_indexes": actionsListIndexes,
  "0034_events_wanted": eventsWanted,
  "0035_new_id": newIdFunction,
  "0036_org_snapshot_versions": orgSnapshotVersions,
  "0037_replay_context": replayContext,
  "0038_reputation": reputation,
  "0039_compliance_bundles": complianceBundles,
  "0040_sdk_tolerant": sdkTolerant,
  "0041_llm_gateway": llmGateway,
  "0042_code_review_github": codeReviewGithub,
  "0043_code_reviews": codeReviews
}
