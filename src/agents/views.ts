/**
 * An agent and its versions as the wire shows them: the spec's keys, then the keys the published
 * SDKs read (CONTRACT-sdk-beyond §8), the same wherever the object appears.
 */
import type { AgentListItem, AgentVersion, AgentView, Decommissioned, RegisteredAgent } from "../../protocol/agents.js"
import type { AgentRow, CountedAgentRow, VersionRow } from "./store.js"

export const versionView = (row: VersionRow): AgentVersion => ({
  agent_slug: row.agent_slug,
  version: row.version,
  instruction_hash: row.instruction_hash,
  changelog: row.changelog,
  published_at: row.published_at,
  id: `${row.agent_slug}@${row.version}`,
  status: "published",
  created_at: row.published_at,
  model_id: row.model_id,
  config_hash: row.config_hash
})

/** What every view of an agent shows first, the public page included. */
export const described = (row: AgentRow) => ({
  agent_slug: row.agent_slug,
  name: row.name,
  description: row.description,
  capabilities: row.capabilities,
  status: row.status
})

/** The SDKs' aliases and fields; `versions` newest first (at most MAX_AGENT_VERSIONS, the caller's rows). */
const sdkKeys = (row: AgentRow, versions: ReadonlyArray<VersionRow>) => ({
  id: row.agent_slug,
  display_name: row.name,
  public: row.public,
  registered_at: row.created_at,
  metadata: row.metadata,
  versions: versions.map(versionView)
})

export const registeredView = (row: AgentRow, versions: ReadonlyArray<VersionRow>): RegisteredAgent => ({
  ...described(row),
  owner_id: row.org_uuid,
  created_at: row.created_at,
  ...sdkKeys(row, versions)
})

export const agentView = (row: CountedAgentRow, versions: ReadonlyArray<VersionRow>): AgentView => ({
  ...registeredView(row, versions),
  metadata: row.metadata,
  current_version: row.current_version,
  action_count: row.action_count,
  decommissioned_at: row.decommissioned_at,
  updated_at: row.updated_at
})

export const listItem = (row: CountedAgentRow, versions: ReadonlyArray<VersionRow>): AgentListItem => ({
  agent_slug: row.agent_slug,
  name: row.name,
  status: row.status,
  current_version: row.current_version,
  action_count: row.action_count,
  created_at: row.created_at,
  description: row.description,
  capabilities: row.capabilities,
  ...sdkKeys(row, versions)
})

/** The whole agent after its decommission, with when and why (`reason` null when none was given). */
export const decommissionedView = (row: CountedAgentRow, versions: ReadonlyArray<VersionRow>): Decommissioned => ({
  ...agentView(row, versions),
  decommissioned_at: row.decommissioned_at ?? row.updated_at,
  reason: row.decommission_reason
})
