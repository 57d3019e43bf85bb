/**
 * WebSocket frames on `GET /api/v1/ws` (CONTRACT.md "WebSockets"). Every frame
 * is a JSON object with a `type`.
 */
import * as Schema from "effect/Schema"

/** `notifications`, `actions` or `case:<id>`. */
export const Channel = Schema.String.check(Schema.isPattern(/^(notifications|actions|case:[A-Za-z0-9_-]{1,100})$/))

export const AuthFrame = Schema.Struct({ type: Schema.Literal("auth"), token: Schema.String })
/** Answered by `subscribed`, or an error frame (`FORBIDDEN` when the credential lacks the channel's read scope). */
export const SubscribeFrame = Schema.Struct({ type: Schema.Literal("subscribe"), channel: Channel })
export const UnsubscribeFrame = Schema.Struct({ type: Schema.Literal("unsubscribe"), channel: Channel })
export const PingFrame = Schema.Struct({ type: Schema.Literal("ping") })

export const ClientFrame = Schema.Union([AuthFrame, SubscribeFrame, UnsubscribeFrame, PingFrame])
export type ClientFrame = typeof ClientFrame.Type

export const SubscribedFrame = Schema.Struct({ type: Schema.Literal("subscribed"), channel: Schema.String })
export const ErrorFrame = Schema.Struct({ type: Schema.Literal("error"), code: Schema.String, message: Schema.String })
export const EventFrame = Schema.Struct({ type: Schema.Literal("event"), channel: Schema.String, data: Schema.Unknown })
export const PongFrame = Schema.Struct({ type: Schema.Literal("pong") })

export const ServerFrame = Schema.Union([SubscribedFrame, ErrorFrame, EventFrame, PongFrame])
export type ServerFrame = typeof ServerFrame.Type

/** Close code sent after an `UNAUTHORIZED` error frame (at authentication, or when the credential stops being valid). */
export const CLOSE_UNAUTHORIZED = 4401

/** `GET /api/v1/ws` in the OpenAPI document (a native uWS route, not an HttpApi endpoint). */
export const liveSocketPath = {
  "/api/v1/ws": {
    get: {
      tags: ["live"],
      operationId: "live.websocket",
      summary: "WebSocket upgrade for live channels",
      description:
        "Authenticate with `Authorization: Bearer` (API key or JWT) on the upgrade or a first frame `{type:\"auth\", token}` within 5 s. " +
        "Subscribe with `{type:\"subscribe\", channel}` to `notifications`, `actions` or `case:<id>`; the server answers `subscribed` or " +
        "`{type:\"error\", code, message}` (`FORBIDDEN` without the channel's read scope: `notifications:read`, `actions:read`, `cases:read`) and pushes " +
        "`{type:\"event\", channel, data}`. Invalid credentials: an `UNAUTHORIZED` error frame, then close code 4401; the same closes an open " +
        "socket once its key is revoked or expires, its JWT expires, its user leaves or its organization is deleted. " +
        "Frame schemas: this file.",
      responses: { "101": { description: "Switching Protocols" }, "503": { description: "Connection cap reached (SERVER_BUSY)" } }
    }
  }
}
