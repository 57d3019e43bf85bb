/**
 * `/api/v1/approvers/*`. Where approval requests are announced (spec "Notification channels"):
 * e-mail and two chat integrations. Messages only notify; approval happens in
 * the dashboard.
 */

import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import * as Schema from "effect/Schema"
import { Authenticated } from "./auth.js"
import { Forbidden, InvalidInput } from "./errors.js"

const Email = Schema.String.check(Schema.isPattern(/^[^\s@]{1,64}@[^\s@]{1,255}$/))
const HookUrl = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048))

export const NotificationChannels = Schema.Struct({
  email: Schema.Struct({ enabled: Schema.Boolean, recipients: Schema.Array(Schema.String) }),
  slack: Schema.Struct({
    enabled: Schema.Boolean,
    webhook_url: Schema.NullOr(Schema.String).annotate({ description: "masked; the full URL is never returned" })
  }),
  teams: Schema.Struct({ enabled: Schema.Boolean, webhook_url: Schema.NullOr(Schema.String) })
})

const ChatInput = Schema.Struct({
  enabled: Schema.Boolean,
  webhook_url: Schema.optionalKey(Schema.NullOr(HookUrl))
})

export const NotificationChannelsInput = Schema.Struct({
  email: Schema.optionalKey(
    Schema.Struct({
      enabled: Schema.Boolean,
      recipients: Schema.optionalKey(Schema.Array(Email).check(Schema.isMaxLength(100)))
    })
  ),
  slack: Schema.optionalKey(ChatInput),
  teams: Schema.optionalKey(ChatInput)
})

export class NotificationChannelsGroup extends HttpApiGroup.make("notificationChannels")
  .add(
    HttpApiEndpoint.get("get", "/api/v1/approvers/notification-channels", { error: Forbidden, success: NotificationChannels }),
    HttpApiEndpoint.put("put", "/api/v1/approvers/notification-channels", { error: [Forbidden, InvalidInput],
      payload: NotificationChannelsInput,
      success: NotificationChannels
    })
  )
  .middleware(Authenticated)
  .annotateMerge(
    OpenApi.annotations({
      title: "Approval notification channels",
      description: "E-mail, Slack and Teams announcements of approval requests (admin or owner). Webhook URLs are stored encrypted and shown masked."
    })
  )
{}
