/**
 * The per-agent receipt chain: every terminal transition of one (org, agent)
 * mints its receipt with `agent_sequence` = previous + 1 and
 * `previous_payload_hash` = the previous receipt's `payload_hash`.
 *
 * The transitions of one agent are queued by its worker (actors/agent.ts), which
 * links them from the head it keeps; the commit pipeline moves the `agent_chains`
 * head only from where that worker saw it (src/actions/commits.ts), and the locked
 * path takes the row lock, so several processes sharing the database cannot fork
 * a chain.
 */

/** Actions sent without an agent_id chain under this per-organization id. */
export const DEFAULT_AGENT_ID = "_default"

export const chainAgentId = (agentId: string | null): string => agentId ?? DEFAULT_AGENT_ID

/** Next link of a chain given its locked head. */
export const nextLink = (head: { readonly lastSequence: number; readonly lastPayloadHash: string | null }) => ({
  agent_sequence: head.lastSequence + 1,
  previous_payload_hash: head.lastSequence === 0 ? null : head.lastPayloadHash
})
