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
 *
 * A socket outlives the request that authenticated it, so its credential is
 * checked again whenever Access invalidates what it names (revocation,
 * departure, deletion, role change; on every node through the fan-out) and
 * when it expires. One that no longer holds closes the socket as if it had
 * never authenticated; a role change only refreshes the socket's principal.
 * Subscribing needs the channel's read scope.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Principal } from "../../protocol/auth.js"
import { CLOSE_UNAUTHORIZED, ClientFrame } from "../../protocol/frames.js"
import { hasScope } from "../access/guards.js"
import { Access, type Session } from "../access/service.js"
import { orgTopic } from "../events/service.js"
import { UwsApp } from "../gateway/server.js"
import type { WebSocket } from "../gateway/uws.js"
import { Fanout } from "../platform/redis/index.js"
import { OpenSockets } from "./open-sockets.js"

export const WS_PATH = "/api/v1/ws"
export const AUTH_TIMEOUT_MS = 5_000
/** Per-socket send buffer; a consumer that falls further behind is disconnected. */
export const MAX_BACKPRESSURE_BYTES = 1024 * 1024
/** setTimeout's longest delay; a later expiry is re-checked at this interval until it is near. */
const MAX_TIMER_MS = 2_147_483_647

interface SocketState {
  principal: Principal | undefined
  /** The credential the socket authenticated with, kept in memory only, to check it again. */
  token: string | undefined
  /** When that credential stops being valid (epoch ms), or null. */
  expiresAt: number | null
  /** The invalidation count when the credential was last checked; a later one means check again. */
  checkedAt: number
  /** The upgrade's bearer token, checked once the socket is open. */
  bearer: string | undefined
  closed: boolean
  authTimer: ReturnType<typeof setTimeout> | undefined
  expiryTimer: ReturnType<typeof setTimeout> | undefined
  /** Frames that arrived while an auth frame was being checked, handled in order afterwards. */
  queued: Array<string> | undefined
}

/** The read scope a channel needs: `case:<id>` reads cases. */
export const channelScope = (channel: string): string =>
  channel === "actions" ? "actions:read" : channel === "notifications" ? "notifications:read" : "cases:read"

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
    const watched = new OpenSockets<WebSocket<SocketState>>()
    let invalidations = 0

    /** The session, undefined when the credential is refused, "error" when it could not be checked (database down). */
    const check = (token: string): Promise<Session | undefined | "error"> =>
      Effect.runPromiseExit(access.authenticateSession(token)).then((exit) =>
        Exit.isSuccess(exit) ? exit.value : Cause.hasFails(exit.cause) ? undefined : "error"
      )
    const authenticate = (token: string): Promise<Session | undefined> => check(token).then((session) => (session === "error" ? undefined : session))

    const send = (ws: WebSocket<SocketState>, frame: string) => {
      if (!ws.getUserData().closed) ws.send(frame)
    }

    const reject = (ws: WebSocket<SocketState>, message: string) => {
      const state = ws.getUserData()
      if (state.closed) return
      // Nothing more is sent, even if uWS runs the close handler later.
      state.closed = true
      ws.cork(() => {
        ws.send(errorFrame("UNAUTHORIZED", message))
        ws.end(CLOSE_UNAUTHORIZED, "unauthorized")
      })
    }

    const armExpiry = (ws: WebSocket<SocketState>) => {
      const state = ws.getUserData()
      clearTimeout(state.expiryTimer)
      state.expiryTimer = undefined
      if (state.expiresAt === null) return
      const delay = Math.min(Math.max(state.expiresAt - Date.now(), 0), MAX_TIMER_MS)
      state.expiryTimer = setTimeout(() => recheck([ws]), delay)
      state.expiryTimer.unref()
    }

    /** Starts watching an authenticated socket's credential (index for invalidations, expiry timer). */
    const watch = (ws: WebSocket<SocketState>) => {
      const state = ws.getUserData()
      watched.add(ws, state.principal!)
      armExpiry(ws)
      // An invalidation that arrived while the credential was being checked may not show in that answer.
      if (state.checkedAt !== invalidations) recheck([ws])
    }

    const admit = (ws: WebSocket<SocketState>, token: string, session: Session, checkedAt: number) => {
      const state = ws.getUserData()
      if (state.principal !== undefined) watched.remove(ws, state.principal)
      state.principal = session.principal
      state.token = token
      state.expiresAt = session.expiresAt
      state.checkedAt = checkedAt
      watch(ws)
    }

    /** Checks the sockets' credentials again (once per distinct credential): closes those that fail, refreshes the others. */
    const recheck = (sockets: Iterable<WebSocket<SocketState>>) => {
      const byToken = new Map<string, Array<WebSocket<SocketState>>>()
      for (const ws of sockets) {
        const { token, closed } = ws.getUserData()
        if (closed || token === undefined) continue
        const group = byToken.get(token)
        if (group === undefined) byToken.set(token, [ws])
        else group.push(ws)
      }
      for (const [token, group] of byToken) {
        const checkedAt = invalidations
        void check(token).then((session) => {
          for (const ws of group) {
            const state = ws.getUserData()
            if (state.closed) continue
            if (session === undefined) reject(ws, "Credentials revoked, expired or no longer valid")
            else if (session === "error") {
              // Closed rather than trusted unchecked, with a code that tells the client to reconnect, not to give up.
              state.closed = true
              ws.end(1011, "could not check credentials; reconnect")
            } else admit(ws, token, session, checkedAt)
          }
        })
      }
    }

    /** Checks the credential of an open socket; frames that arrive meanwhile are queued and handled after. */
    const authenticateOpen = (ws: WebSocket<SocketState>, token: string) => {
      const state = ws.getUserData()
      state.queued = []
      const checkedAt = invalidations
      void authenticate(token).then((session) => {
        const queued = state.queued ?? []
        state.queued = undefined
        if (state.closed) return
        if (session === undefined) return reject(ws, "Missing, invalid or revoked credentials")
        clearTimeout(state.authTimer)
        admit(ws, token, session, checkedAt)
        ws.cork(() => {
          for (const text of queued) if (!state.closed) handleFrame(ws, text)
        })
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
        return authenticateOpen(ws, frame.token)
      }
      if (state.principal === undefined) return reject(ws, "authenticate first with {type:\"auth\", token}")
      const topic = orgTopic(state.principal.orgUuid, frame.channel)
      if (frame.type === "subscribe") {
        const scope = channelScope(frame.channel)
        if (!hasScope(state.principal, scope)) return send(ws, errorFrame("FORBIDDEN", `This key lacks the ${scope} scope`))
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
      // Drop-and-close instead of silently skipping messages.
      closeOnBackpressureLimit: true,
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
        // Upgrade now, inside the handler, and check a bearer token once the socket is open: uWS
        // 20.57's res.cork() can close a socket upgraded from an async callback right after its
        // open event (uNetworking/uWebSockets#1928, fixed in the C++ library at v20.79.0; the
        // uWS.js 20.57 binaries still show it: about half the runs of test/sockets.test.ts lost a socket).
        res.upgrade<SocketState>(
          {
            principal: undefined,
            token: undefined,
            bearer: token,
            expiresAt: null,
            checkedAt: invalidations,
            closed: false,
            authTimer: undefined,
            expiryTimer: undefined,
            queued: undefined
          },
          key,
          protocol,
          extensions,
          context
        )
      },
      open: (ws) => {
        connections.open++
        open.add(ws)
        const state = ws.getUserData()
        if (state.bearer !== undefined) {
          const token = state.bearer
          state.bearer = undefined
          return authenticateOpen(ws, token)
        }
        state.authTimer = setTimeout(() => {
          if (state.principal === undefined) reject(ws, "no credentials within 5 seconds")
        }, AUTH_TIMEOUT_MS)
      },
      message: (ws, message, isBinary) => {
        if (isBinary) return send(ws, errorFrame("INVALID_FRAME", "frames are JSON text"))
        handleFrame(ws, Buffer.from(message).toString("utf8"))
      },
      close: (ws) => {
        const state = ws.getUserData()
        state.closed = true
        clearTimeout(state.authTimer)
        clearTimeout(state.expiryTimer)
        if (state.principal !== undefined) watched.remove(ws, state.principal)
        state.token = undefined
        open.delete(ws)
        connections.open--
      }
    })

    yield* access.watchInvalidations((what) => {
      invalidations++
      const affected = watched.affected(what)
      if (affected.size > 0) recheck(affected)
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
