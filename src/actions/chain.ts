/**
 * The per-agent receipt chain: every terminal transition of one (org, agent)
 * mints its receipt with `agent_sequence` = previous + 1 and
 * `previous_payload_hash` = the previous receipt's `payload_hash`.
 *
 * Correctness comes from the `agent_chains` row lock taken inside the minting
 * transaction (several processes may share the database). The transitions of
 * one agent are queued by its AgentActor (actors/agent.ts), so they do not pile
 * up on that row lock holding pooled connections.
 */

/** Actions sent without an agent_id chain under this per-organization id. */
export const DEFAULT_AGENT_ID = "_default"

export const chainAgentId = (agentId: string | null): string => agentId ?? DEFAULT_AGENT_ID

/** Next link of a chain given its locked head. */
export const nextLink = (head: { readonly lastSequence: number; readonly lastPayloadHash: string | null }) => ({
  agent_sequence: head.lastSequence + 1,
  previous_payload_hash: head.lastSequence === 0 ? null : head.lastPayloadHash
})
