/** SQL for the approval notification channels and the log of what each announcement did. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { SqlClient } from "effect/sql"
import { Json } from "../platform/columns.js"
import { jsonb } from "../platform/db/index.js"
import * as Rows from "../platform/db/rows.js"
import { sqlDefects } from "../platform/db/store.js"

const ChannelsRow = Schema.Struct({
  email_enabled: Schema.Boolean,
  email_recipients: Json(Schema.Array(Schema.String)),
  slack_enabled: Schema.Boolean,
  slack_url_sealed: Schema.NullOr(Schema.String),
  teams_enabled: Schema.Boolean,
  teams_url_sealed: Schema.NullOr(Schema.String)
})
export type ChannelsRow = typeof ChannelsRow.Type

const ChannelsSettings = Schema.Struct({
  orgUuid: Schema.String,
  emailEnabled: Schema.Boolean,
  recipients: Schema.Array(Schema.String),
  slackEnabled: Schema.Boolean,
  slackUrl: Schema.NullOr(Schema.String),
  teamsEnabled: Schema.Boolean,
  teamsUrl: Schema.NullOr(Schema.String)
})
export type ChannelsSettings = typeof ChannelsSettings.Type

const Delivery = Schema.Struct({
  orgUuid: Schema.String,
  eventId: Schema.String,
  channel: Schema.Literals(["email", "slack", "teams"]),
  status: Schema.String,
  detail: Schema.NullOr(Schema.String)
})
export type ChannelDelivery = typeof Delivery.Type

export const makeChannelsStore = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const load = Rows.findOneOption({
    Request: Schema.String,
    Result: ChannelsRow,
    execute: (orgUuid) =>
      sql`SELECT email_enabled, email_recipients, slack_enabled, slack_url_sealed, teams_enabled, teams_url_sealed
          FROM notification_channels WHERE org_uuid = ${orgUuid}`
  })
  const save = Rows.void({
    Request: ChannelsSettings,
    execute: (row) =>
      sql`
        INSERT INTO notification_channels
          (org_uuid, email_enabled, email_recipients, slack_enabled, slack_url_sealed, teams_enabled, teams_url_sealed, updated_at)
        VALUES (${row.orgUuid}, ${row.emailEnabled}, ${jsonb(row.recipients)}, ${row.slackEnabled}, ${row.slackUrl}, ${row.teamsEnabled}, ${row.teamsUrl}, now())
        ON CONFLICT (org_uuid) DO UPDATE SET
          email_enabled = EXCLUDED.email_enabled, email_recipients = EXCLUDED.email_recipients,
          slack_enabled = EXCLUDED.slack_enabled, slack_url_sealed = EXCLUDED.slack_url_sealed,
          teams_enabled = EXCLUDED.teams_enabled, teams_url_sealed = EXCLUDED.teams_url_sealed, updated_at = now()`
  })
  const record = Rows.void({
    Request: Delivery,
    execute: (row) =>
      sql`INSERT INTO channel_deliveries (org_uuid, event_id, channel, status, detail)
          VALUES (${row.orgUuid}, ${row.eventId}, ${row.channel}, ${row.status}, ${row.detail})`
  })

  return sqlDefects({
    /** The organization's settings; undefined before it saved any. */
    load: (orgUuid: string) => Effect.map(load(orgUuid), Option.getOrUndefined),
    save,
    record
  })
})
