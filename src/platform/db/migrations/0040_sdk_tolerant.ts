/**
 * What the published SDKs send and read (CONTRACT-sdk-beyond §8): an agent's `public` flag, a
 * version's `model_id` and `config_hash` (and no `instruction_hash` when the SDK sends none), a
 * compliance snapshot's signature (null on the snapshots recorded before), and an evidence
 * package's action uuids (package order) and agent ids, kept beside the sealed document so a list
 * answers them without reading every sealed payload. Existing packages get both from their
 * sealed document.
 */
import { migration } from "./migration.js"

export default migration(function* (sql) {
  yield* sql`ALTER TABLE agents ADD COLUMN public BOOLEAN NOT NULL DEFAULT false`
  yield* sql`
    ALTER TABLE agent_versions
      ALTER COLUMN instruction_hash DROP NOT NULL,
      ADD COLUMN model_id TEXT,
      ADD COLUMN config_hash TEXT`
  yield* sql`
    ALTER TABLE compliance_snapshots
      ADD COLUMN snapshot_hash TEXT,
      ADD COLUMN signature TEXT,
      ADD COLUMN public_key_id TEXT,
      ADD COLUMN timestamp_token TEXT`
  yield* sql`
    ALTER TABLE evidence_packages
      ADD COLUMN action_uuids JSONB NOT NULL DEFAULT '[]',
      ADD COLUMN agent_ids JSONB NOT NULL DEFAULT '[]'`
  yield* sql`
    UPDATE evidence_packages p SET
      action_uuids = COALESCE((
        SELECT jsonb_agg(a.value ->> 'action_uuid' ORDER BY a.ordinality)
        FROM jsonb_array_elements(p.signed_payload::jsonb -> 'actions') WITH ORDINALITY a
      ), '[]'),
      agent_ids = COALESCE((
        SELECT jsonb_agg(DISTINCT a.value ->> 'agent_id')
        FROM jsonb_array_elements(p.signed_payload::jsonb -> 'actions') a
        WHERE a.value ->> 'agent_id' IS NOT NULL
      ), '[]')`
})
