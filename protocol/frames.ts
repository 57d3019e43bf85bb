/**
 * WebSocket frames on `GET /api/v1/ws` (CONTRACT.md "WebSockets"). Every frame
 * is a JSON object with a `type`.
 */
import * as Schema from "effect/Schema"

/** `notifications`, `actions` or `case:<id>`. */
export const Channel = Schema.String.check(Schema.isPattern(/^(notifications|actions|case:[A-Za-z0-9_-]{1,100})$/))

export const AuthFrame = Schema.Struct({ type: Schema.Literal("auth"), token: Schema.String })
/**
 * Answered by `subscribed`, or an error frame naming the channel: `FORBIDDEN` when the credential
 * lacks the channel's read scope, `NOT_FOUND` for a `case:<id>` that is not a case of the caller's
 * organization, `TOO_MANY_SUBSCRIPTIONS` past `MAX_SUBSCRIPTIONS`, `RATE_LIMIT_EXCEEDED` when a case
 * lookup is past the credential's per-minute rate limit. Subscribing again to a held channel answers
 * `subscribed` and counts once.
 */
export const SubscribeFrame = Schema.Struct({ type: Schema.Literal("subscribe"), channel: Channel })
export const UnsubscribeFrame = Schema.Struct({ type: Schema.Literal("unsubscribe"), channel: Channel })
export const PingFrame = Schema.Struct({ type: Schema.Literal("ping") })

export const ClientFrame = Schema.Union([AuthFrame, SubscribeFrame, UnsubscribeFrame, PingFrame])
export type ClientFrame = typeof ClientFrame.Type

export const SubscribedFrame = Schema.Struct({ type: Schema.Literal("subscribed"), channel: Schema.String })
/**
 * Codes: `UNAUTHORIZED` (then close 4401), `RATE_LIMIT_EXCEEDED` (at authentication: then close 4429),
 * `INVALID_FRAME` (not a JSON frame of this file; over `MAX_FRAME_BYTES`: then close 1009),
 * `ALREADY_AUTHENTICATED`, `FORBIDDEN`, `NOT_FOUND`, `TOO_MANY_SUBSCRIPTIONS`, `UNAVAILABLE` (could not
 * check now; try again). `channel` names the channel of a refused subscribe; `retry_after` is in seconds.
 */
export const ErrorFrame = Schema.Struct({
  type: Schema.Literal("error"),
  code: Schema.String,
  message: Schema.String,
  channel: Schema.optionalKey(Schema.String),
  retry_after: Schema.optionalKey(Schema.Number)
})
export const EventFrame = Schema.Struct({ type: Schema.Literal("event"), channel: Schema.String, data: Schema.Unknown })
export const PongFrame = Schema.Struct({ type: Schema.Literal("pong") })

export const ServerFrame = Schema.Union([SubscribedFrame, ErrorFrame, EventFrame, PongFrame])
export type ServerFrame = typeof ServerFrame.Type

/** Close code sent after an `UNAUTHORIZED` error frame (at authentication, or when the credential stops being valid). */
export const CLOSE_UNAUTHORIZED = 4401
/** Close code sent after a `RATE_LIMIT_EXCEEDED` error frame at authentication: the address or key prefix failed too often; retry after `retry_after`. */
export const CLOSE_RATE_LIMITED = 4429
/** Close code (RFC 6455 "message too big") sent after an `INVALID_FRAME` error frame for a frame over `MAX_FRAME_BYTES`. */
export const CLOSE_TOO_BIG = 1009
/** Largest frame the server reads; a larger one closes the socket with 1009. */
export const MAX_FRAME_BYTES = 16 * 1024
/** Channels one socket may hold at once. */
export const MAX_SUBSCRIPTIONS = 100

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
        "`{type:\"error\", code, message, channel}` (`FORBIDDEN` without the channel's read scope: `notifications:read`, `actions:read`, `cases:read`; " +
        "`NOT_FOUND` for a case that is not the organization's; `TOO_MANY_SUBSCRIPTIONS` beyond 100 channels per socket) and pushes " +
        "`{type:\"event\", channel, data}`. Invalid credentials: an `UNAUTHORIZED` error frame, then close code 4401; the same closes an open " +
        "socket once its key is revoked or expires, its JWT expires, its user leaves or its organization is deleted. Too many failed " +
        "authentications from the address: a `RATE_LIMIT_EXCEEDED` error frame with `retry_after`, then close code 4429. A frame over 16 KiB: " +
        "an `INVALID_FRAME` error frame, then close code 1009. " +
        "Frame schemas: this file.",
      responses: { "101": { description: "Switching Protocols" }, "503": { description: "Connection cap reached (SERVER_BUSY)" } }
    }
  }
}
