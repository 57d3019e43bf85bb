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
 * A refused credential counts against the client address's budget of failed
 * authentications (shared with HTTP); past it the socket closes with 4429.
 * Subscribing needs the channel's read scope, and a `case:<id>` channel a case
 * of the organization (channels.ts); a socket holds at most 100 channels. A
 * frame over 16 KiB closes the socket with 1009 and a reason.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Principal } from "../../protocol/auth.js"
import {
  CLOSE_RATE_LIMITED,
  CLOSE_TOO_BIG,
  CLOSE_UNAUTHORIZED,
  ClientFrame,
  MAX_FRAME_BYTES,
  MAX_SUBSCRIPTIONS
} from "../../protocol/frames.js"
import type { AccessError, CredentialsThrottled } from "../access/errors.js"
import { Access, type Session } from "../access/service.js"
import { orgTopic } from "../events/service.js"
import { UwsApp } from "../gateway/server.js"
import type { WebSocket } from "../gateway/uws.js"
import { Config } from "../platform/config.js"
import { Fanout } from "../platform/redis/index.js"
import { type ChannelVerdict, makeChannelCheck } from "./channels.js"
import { OpenSockets } from "./open-sockets.js"

export { channelScope } from "./channels.js"

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
  /** The client's address: failed authentications count against it. */
  readonly address: string
  /** The channels held (at most MAX_SUBSCRIPTIONS). */
  readonly channels: Set<string>
  closed: boolean
  authTimer: ReturnType<typeof setTimeout> | undefined
  expiryTimer: ReturnType<typeof setTimeout> | undefined
  /** Frames that arrived while a credential or a case was being checked, handled in order afterwards. */
  queued: Array<string> | undefined
}

/** Frames a socket may send while one is being checked: fewer before authentication, enough after for a burst of subscribes. */
const MAX_QUEUED_UNAUTHENTICATED = 16
const MAX_QUEUED = MAX_SUBSCRIPTIONS + 16
/** The most uWS buffers of one frame; a larger one it drops without a close frame (1006). Ours is MAX_FRAME_BYTES. */
const hardFrameCap = (maxJsonBodyBytes: number) => Math.max(maxJsonBodyBytes, MAX_FRAME_BYTES)

const decodeFrame = Schema.decodeUnknownResult(ClientFrame)

const errorFrame = (code: string, message: string, extra?: { channel?: string; retry_after?: number }) =>
  JSON.stringify({ type: "error", code, message, ...extra })
const subscribedFrame = (channel: string) => JSON.stringify({ type: "subscribed", channel })
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
    const config = yield* Config
    const channelCheck = yield* makeChannelCheck(access)
    const open = new Set<WebSocket<SocketState>>()
    const watched = new OpenSockets<WebSocket<SocketState>>()
    let invalidations = 0

    /**
     * The session; undefined when the credential is refused, its refusal when the client is past its
     * budget of failures, "error" when it could not be checked (database down).
     */
    const outcome = (checking: Effect.Effect<Session, AccessError>): Promise<Session | CredentialsThrottled | undefined | "error"> =>
      Effect.runPromise(Effect.result(checking)).then(
        (result) => (Result.isSuccess(result) ? result.success : result.failure.reason._tag === "CredentialsThrottled" ? result.failure.reason : undefined),
        () => "error" as const
      )
    const isThrottled = (value: Session | CredentialsThrottled | undefined | "error"): value is CredentialsThrottled =>
      typeof value === "object" && "_tag" in value
    /** A re-check of an open socket's credential: not a guess, so not counted (and never throttled). */
    const check = (token: string) => outcome(access.authenticateSession(token)).then((session) => (isThrottled(session) ? undefined : session))

    const send = (ws: WebSocket<SocketState>, frame: string) => {
      if (!ws.getUserData().closed) ws.send(frame)
    }

    /** An error frame, then the close code; nothing more is sent, even if uWS runs the close handler later. */
    const closeWith = (ws: WebSocket<SocketState>, frame: string, code: number, reason: string) => {
      const state = ws.getUserData()
      if (state.closed) return
      state.closed = true
      ws.cork(() => {
        ws.send(frame)
        ws.end(code, reason)
      })
    }

    const reject = (ws: WebSocket<SocketState>, message: string) => closeWith(ws, errorFrame("UNAUTHORIZED", message), CLOSE_UNAUTHORIZED, "unauthorized")

    const throttle = (ws: WebSocket<SocketState>, refusal: CredentialsThrottled) =>
      closeWith(
        ws,
        errorFrame(refusal.code, refusal.message, { retry_after: refusal.state.retryAfterSeconds }),
        CLOSE_RATE_LIMITED,
        "too many failed authentications"
      )

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

    /** Runs `then` with what `pending` resolves to; frames that arrive meanwhile are queued and handled after, in order. */
    const whilePending = <A>(ws: WebSocket<SocketState>, pending: A | Promise<A>, then: (value: A) => void) => {
      if (!(pending instanceof Promise)) return then(pending)
      const state = ws.getUserData()
      state.queued = []
      void pending.then((value) => {
        const queued = state.queued ?? []
        state.queued = undefined
        if (state.closed) return
        ws.cork(() => {
          then(value)
          for (const text of queued) if (!state.closed) handleFrame(ws, text)
        })
      })
    }

    /** Checks the credential of an open socket; a refusal counts against the client's address. */
    const authenticateOpen = (ws: WebSocket<SocketState>, token: string) => {
      const state = ws.getUserData()
      const checkedAt = invalidations
      whilePending(ws, outcome(access.authenticateClient(token, state.address)), (session) => {
        if (session === undefined || session === "error") return reject(ws, "Missing, invalid or revoked credentials")
        if (isThrottled(session)) return throttle(ws, session)
        clearTimeout(state.authTimer)
        admit(ws, token, session, checkedAt)
      })
    }

    const subscribe = (ws: WebSocket<SocketState>, channel: string) => {
      const state = ws.getUserData()
      if (state.channels.has(channel)) return send(ws, subscribedFrame(channel))
      if (state.channels.size >= MAX_SUBSCRIPTIONS) {
        return send(ws, errorFrame("TOO_MANY_SUBSCRIPTIONS", `A socket holds at most ${MAX_SUBSCRIPTIONS} channels; unsubscribe from one first`, { channel }))
      }
      whilePending(ws, channelCheck(state.principal!, channel), (verdict: ChannelVerdict) => {
        if (!verdict.ok) {
          return send(ws, errorFrame(verdict.code, verdict.message, verdict.retryAfter === undefined ? { channel } : { channel, retry_after: verdict.retryAfter }))
        }
        state.channels.add(channel)
        ws.subscribe(orgTopic(state.principal!.orgUuid, channel))
        send(ws, subscribedFrame(channel))
      })
    }

    const handleFrame = (ws: WebSocket<SocketState>, text: string) => {
      const state = ws.getUserData()
      if (state.queued !== undefined) {
        if (state.queued.length < (state.principal === undefined ? MAX_QUEUED_UNAUTHENTICATED : MAX_QUEUED)) state.queued.push(text)
        else if (state.principal === undefined) reject(ws, "too many frames before authentication finished")
        else closeWith(ws, errorFrame("INVALID_FRAME", "too many frames while a subscription was being checked"), 1008, "too many frames in flight")
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
      if (frame.type === "subscribe") return subscribe(ws, frame.channel)
      state.channels.delete(frame.channel)
      ws.unsubscribe(orgTopic(state.principal.orgUuid, frame.channel))
    }

    app.ws<SocketState>(WS_PATH, {
      idleTimeout: 60,
      sendPingsAutomatically: true,
      // Frames up to this size reach `message`, which closes those over MAX_FRAME_BYTES with 1009 and a
      // reason; beyond it uWS drops the connection without a close frame. The same memory a JSON body may hold.
      maxPayloadLength: hardFrameCap(config.maxJsonBodyBytes),
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      // Drop-and-close instead of silently skipping messages.
      closeOnBackpressureLimit: true,
      upgrade: (res, req, context) => {
        // `req` is only valid synchronously: copy what the upgrade needs first.
        const key = req.getHeader("sec-websocket-key")
        const protocol = req.getHeader("sec-websocket-protocol")
        const extensions = req.getHeader("sec-websocket-extensions")
        const token = bearerToken(req.getHeader("authorization"))
        const address = Buffer.from(res.getRemoteAddressAsText()).toString() || "unknown"
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
            address,
            channels: new Set(),
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
        if (message.byteLength > MAX_FRAME_BYTES) {
          const text = `frames are at most ${MAX_FRAME_BYTES} bytes; this one had ${message.byteLength}`
          return closeWith(ws, errorFrame("INVALID_FRAME", text), CLOSE_TOO_BIG, `frame larger than ${MAX_FRAME_BYTES} bytes`)
        }
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
