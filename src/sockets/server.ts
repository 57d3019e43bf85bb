/**
 * `GET /api/v1/ws`, native on uWS (CONTRACT.md "WebSockets").
 *
 * A socket authenticates with `Authorization: Bearer` on the upgrade or with a
 * first `{type:"auth", token}` frame within 5 s, then subscribes to channels.
 * Every channel maps to the uWS topic `org:<org_uuid>:<channel>`, so a socket
 * can only ever receive its own organization's events. This process
 * subscribes once to the cross-process `Fanout` and re-publishes what arrives
 * to its local topics; uWS then writes to every subscriber without JS work
 * per socket. Slow consumers are closed at the backpressure limit rather than
 * buffered without bound.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Principal } from "../../protocol/auth.js"
import { CLOSE_UNAUTHORIZED, ClientFrame } from "../../protocol/frames.js"
import { Access } from "../access/service.js"
import { orgTopic } from "../events/service.js"
import { UwsApp } from "../gateway/server.js"
import type { WebSocket } from "../gateway/uws.js"
import { Fanout } from "../platform/redis/index.js"

export const WS_PATH = "/api/v1/ws"
export const AUTH_TIMEOUT_MS = 5_000
/** Per-socket send buffer; a consumer that falls further behind is disconnected. */
export const MAX_BACKPRESSURE_BYTES = 1024 * 1024

interface SocketState {
  principal: Principal | undefined
  /** Set when the upgrade carried a bad credential: the socket is told and closed on open. */
  rejected: boolean
  closed: boolean
  authTimer: ReturnType<typeof setTimeout> | undefined
  /** Frames that arrived while an auth frame was being checked, handled in order afterwards. */
  queued: Array<string> | undefined
}

const decodeFrame = Schema.decodeUnknownResult(ClientFrame)

const errorFrame = (code: string, message: string) => JSON.stringify({ type: "error", code, message })
const PONG = JSON.stringify({ type: "pong" })

/** `{type:"event", channel, data}` around a message that is already JSON (what `Events.announce` publishes). */
export const eventFrame = (channel: string, json: string) => `{"type":"event","channel":${JSON.stringify(channel)},"data":${json}}`

/** The channel part of `org:<org_uuid>:<channel>`, or undefined for other topics. */
export const channelOfTopic = (topic: string): string | undefined => {
  if (!topic.startsWith("org:")) return undefined
  const end = topic.indexOf(":", 4)
  return end === -1 || end === topic.length - 1 ? undefined : topic.slice(end + 1)
}

const looksLikeJson = (message: string) => {
  try {
    JSON.parse(message)
    return true
  } catch {
    return false
  }
}

const bearerToken = (header: string): string | undefined => {
  const match = /^Bearer\s+(.+)$/i.exec(header.trim())
  return match?.[1]?.trim()
}

export const SocketsLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const { app, connections } = yield* UwsApp
    const access = yield* Access
    const fanout = yield* Fanout
    const open = new Set<WebSocket<SocketState>>()

    const authenticate = (token: string): Promise<Principal | undefined> =>
      Effect.runPromiseExit(access.authenticate(token)).then((exit) => (Exit.isSuccess(exit) ? exit.value : undefined))

    const send = (ws: WebSocket<SocketState>, frame: string) => {
      if (!ws.getUserData().closed) ws.send(frame)
    }

    const reject = (ws: WebSocket<SocketState>, message: string) => {
      const state = ws.getUserData()
      if (state.closed) return
      ws.cork(() => {
        ws.send(errorFrame("UNAUTHORIZED", message))
        ws.end(CLOSE_UNAUTHORIZED, "unauthorized")
      })
    }

    const handleFrame = (ws: WebSocket<SocketState>, text: string) => {
      const state = ws.getUserData()
      if (state.queued !== undefined) {
        if (state.queued.length < 16) state.queued.push(text)
        else reject(ws, "too many frames before authentication finished")
        return
      }
      let raw: unknown
      try {
        raw = JSON.parse(text)
      } catch {
        return send(ws, errorFrame("INVALID_FRAME", "frames are JSON objects with a type"))
      }
      const decoded = decodeFrame(raw)
      if (Result.isFailure(decoded)) return send(ws, errorFrame("INVALID_FRAME", decoded.failure.message))
      const frame = decoded.success
      if (frame.type === "ping") return send(ws, PONG)
      if (frame.type === "auth") {
        if (state.principal !== undefined) return send(ws, errorFrame("ALREADY_AUTHENTICATED", "this socket is already authenticated"))
        state.queued = []
        void authenticate(frame.token).then((principal) => {
          const queued = state.queued ?? []
          state.queued = undefined
          if (state.closed) return
          if (principal === undefined) return reject(ws, "Missing, invalid or revoked credentials")
          clearTimeout(state.authTimer)
          state.principal = principal
          ws.cork(() => {
            for (const text of queued) if (!state.closed) handleFrame(ws, text)
          })
        })
        return
      }
      if (state.principal === undefined) return reject(ws, "authenticate first with {type:\"auth\", token}")
      const topic = orgTopic(state.principal.orgUuid, frame.channel)
      if (frame.type === "subscribe") {
        ws.subscribe(topic)
        return send(ws, JSON.stringify({ type: "subscribed", channel: frame.channel }))
      }
      ws.unsubscribe(topic)
    }

    app.ws<SocketState>(WS_PATH, {
      idleTimeout: 60,
      sendPingsAutomatically: true,
      maxPayloadLength: 16 * 1024,
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      // uWS reads this as a boolean: drop-and-close instead of silently skipping messages.
      closeOnBackpressureLimit: 1,
      upgrade: (res, req, context) => {
        // `req` is only valid synchronously: copy what the upgrade needs first.
        const key = req.getHeader("sec-websocket-key")
        const protocol = req.getHeader("sec-websocket-protocol")
        const extensions = req.getHeader("sec-websocket-extensions")
        const token = bearerToken(req.getHeader("authorization"))
        if (connections.open >= connections.cap) {
          res.cork(() => {
            res
              .writeStatus("503 Service Unavailable")
              .writeHeader("content-type", "application/json")
              .end(JSON.stringify({ error: "too many open connections; retry shortly", code: "SERVER_BUSY", message: "too many open connections; retry shortly" }), true)
          })
          return
        }
        const upgradeWith = (state: SocketState): void => {
          res.cork(() => res.upgrade(state, key, protocol, extensions, context))
        }
        const fresh = (principal: Principal | undefined, rejected: boolean): SocketState => ({
          principal,
          rejected,
          closed: false,
          authTimer: undefined,
          queued: undefined
        })
        if (token === undefined) return upgradeWith(fresh(undefined, false))
        let aborted = false
        res.onAborted(() => {
          aborted = true
        })
        void authenticate(token).then((principal) => {
          if (!aborted) upgradeWith(fresh(principal, principal === undefined))
        })
      },
      open: (ws) => {
        connections.open++
        open.add(ws)
        const state = ws.getUserData()
        if (state.rejected) return reject(ws, "Missing, invalid or revoked credentials")
        if (state.principal === undefined) {
          state.authTimer = setTimeout(() => {
            if (state.principal === undefined) reject(ws, "no credentials within 5 seconds")
          }, AUTH_TIMEOUT_MS)
        }
      },
      message: (ws, message, isBinary) => {
        if (isBinary) return send(ws, errorFrame("INVALID_FRAME", "frames are JSON text"))
        handleFrame(ws, Buffer.from(message).toString("utf8"))
      },
      close: (ws) => {
        const state = ws.getUserData()
        state.closed = true
        clearTimeout(state.authTimer)
        open.delete(ws)
        connections.open--
      }
    })

    // One subscription per process; every local subscriber of the topic gets the frame from uWS directly.
    yield* fanout.subscribe(
      (topic, message) => {
        const channel = channelOfTopic(topic)
        if (channel === undefined || !looksLikeJson(message)) return
        app.publish(topic, eventFrame(channel, message))
      },
      { topicPrefix: "org:" }
    )

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const ws of [...open]) {
          if (!ws.getUserData().closed) ws.end(1001, "server shutting down")
        }
      })
    )
  })
)
