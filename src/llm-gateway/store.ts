/**
 * SQL of the LLM gateway: an organization's settings, the heartbeats of the gateway processes,
 * and the gateway calls still open in the actions area's table (a gateway action carries what
 * the gateway needs in its stored `context`: method, path, body digest, and the process that
 * runs it as `gateway_instance`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { NullableJson, Timestamp } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const SettingsRow = Schema.Struct({ store_details: Schema.Boolean, updated_at: Timestamp })
export type SettingsRow = typeof SettingsRow.Type

const CallRow = Schema.Struct({
  org_uuid: Schema.String,
  action_uuid: Schema.String,
  action_type: Schema.String,
  status: Schema.String,
  agent_id: Schema.NullOr(Schema.String),
  context: NullableJson(Schema.Record(Schema.String, Schema.Unknown))
})
export type CallRow = typeof CallRow.Type

export const makeGatewayStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const settingsOf = Rows.findOneOption({
    Request: Schema.String,
    Result: SettingsRow,
    execute: (orgUuid) => sql`SELECT store_details, updated_at FROM gateway_settings WHERE org_uuid = ${orgUuid}`
  })
  const putSettings = Rows.findOne({
    Request: Schema.Struct({ orgUuid: Schema.String, storeDetails: Schema.Boolean }),
    Result: SettingsRow,
    execute: ({ orgUuid, storeDetails }) =>
      sql`INSERT INTO gateway_settings (org_uuid, store_details, updated_at) VALUES (${orgUuid}, ${storeDetails}, now())
          ON CONFLICT (org_uuid) DO UPDATE SET store_details = EXCLUDED.store_details, updated_at = now()
          RETURNING store_details, updated_at`
  })
  const call = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, actionUuid: Schema.String }),
    Result: CallRow,
    execute: ({ orgUuid, actionUuid }) =>
      sql`SELECT org_uuid, action_uuid, action_type, status, agent_id, context FROM actions WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid}`
  })
  const claim = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, actionUuid: Schema.String, instance: Schema.String }),
    Result: Schema.Struct({ action_uuid: Schema.String }),
    execute: ({ orgUuid, actionUuid, instance }) =>
      sql`UPDATE actions SET context = context || ${jsonb({ gateway_instance: instance })}
          WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} AND status = 'approved' AND NOT (context ? 'gateway_instance')
          RETURNING action_uuid`
  })
  const release = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, actionUuid: Schema.String }),
    Result: Schema.Struct({ policy_uuid: Schema.NullOr(Schema.String) }),
    execute: ({ orgUuid, actionUuid }) =>
      sql`UPDATE actions SET context = context - 'gateway_instance' WHERE org_uuid = ${orgUuid} AND action_uuid = ${actionUuid} RETURNING policy_uuid`
  })
  const decommissioned = Rows.findOneOption({
    Request: Schema.Struct({ orgUuid: Schema.String, agentId: Schema.String }),
    Result: Schema.Struct({ status: Schema.String }),
    execute: ({ orgUuid, agentId }) =>
      sql`SELECT status FROM agents WHERE org_uuid = ${orgUuid} AND agent_slug = ${agentId} AND status = 'decommissioned'`
  })
  const abandoned = Rows.findAll({
    Request: Schema.Struct({ aliveSince: Schema.String, limit: Schema.Number, own: Schema.String }),
    Result: CallRow,
    execute: ({ aliveSince, limit, own }) =>
      sql`SELECT a.org_uuid, a.action_uuid, a.action_type, a.status, a.agent_id, a.context FROM actions a
          WHERE a.status IN ('authorized', 'approved') AND a.action_type LIKE 'llm.%' AND a.context ? 'gateway_instance'
            AND a.context->>'gateway_instance' <> ${own}
            AND NOT EXISTS (SELECT 1 FROM gateway_instances i
                            WHERE i.instance_id = a.context->>'gateway_instance' AND i.heartbeat_at >= ${aliveSince})
          ORDER BY a.created_at LIMIT ${limit}`
  })

  return sqlDefects({
    settingsOf: (orgUuid: string) => Effect.map(settingsOf(orgUuid), Option.getOrUndefined),
    // INSERT … RETURNING always answers the row.
    putSettings: (orgUuid: string, storeDetails: boolean) => Effect.orDie(putSettings({ orgUuid, storeDetails })),
    /** The action with its stored context (for a re-sent approved call). */
    call: (orgUuid: string, actionUuid: string) => Effect.map(call({ orgUuid, actionUuid }), Option.getOrUndefined),
    /** Marks an approved gateway action as run by `instance`; false when another request took it first. */
    claim: (orgUuid: string, actionUuid: string, instance: string) => Effect.map(claim({ orgUuid, actionUuid, instance }), Option.isSome),
    /** Takes the call's process off an action nothing runs (awaiting approval, or past notarizing); answers its policy. */
    release: (orgUuid: string, actionUuid: string) => Effect.map(release({ orgUuid, actionUuid }), (row) => Option.getOrUndefined(row)?.policy_uuid ?? null),
    agentDecommissioned: (orgUuid: string, agentId: string) =>
      Effect.map(decommissioned({ orgUuid, agentId }), Option.isSome),
    heartbeat: (instance: string) =>
      sql`INSERT INTO gateway_instances (instance_id, heartbeat_at) VALUES (${instance}, now())
          ON CONFLICT (instance_id) DO UPDATE SET heartbeat_at = now()`.pipe(Effect.asVoid),
    /** Forgets processes silent since `before` (their calls are swept first). */
    forgetInstances: (before: string) => sql`DELETE FROM gateway_instances WHERE heartbeat_at < ${before}`.pipe(Effect.asVoid),
    leave: (instance: string) => sql`DELETE FROM gateway_instances WHERE instance_id = ${instance}`.pipe(Effect.asVoid),
    /** Open gateway calls of other processes not heard from since `aliveSince` (this one, `own`, is alive: it is asking). */
    abandoned: (aliveSince: string, limit: number, own: string) => abandoned({ aliveSince, limit, own })
  })
})

export type GatewayStore = Effect.Success<typeof makeGatewayStore>
