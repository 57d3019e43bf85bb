/**
 * One WebSocket per signed-in tab on /api/v1/ws: a first `auth` frame (browsers cannot set headers
 * on an upgrade), then `subscribe` to `notifications`. Reconnects with capped exponential backoff
 * and jitter, subscribing again each time; `onSubscribed` lets pages reload what they may have
 * missed while offline. A 4401 close (or UNAUTHORIZED frame) ends the session instead.
 */
import type { NotificationEvent, ServerFrame } from "./types.ts"

export type LiveState = { readonly state: "connecting" } | { readonly state: "live" } | { readonly state: "offline"; readonly retryInSeconds: number }

export interface LiveHandlers {
  readonly onState: (state: LiveState) => void
  readonly onEvent: (event: NotificationEvent) => void
  readonly onSubscribed: () => void
  readonly onUnauthorized: () => void
}

const CLOSE_UNAUTHORIZED = 4401
const MAX_DELAY_MS = 30_000

export const socketUrl = () => `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/api/v1/ws`

export const backoffMs = (attempt: number) => {
  const base = Math.min(MAX_DELAY_MS, 500 * 2 ** attempt)
  return Math.round(base / 2 + Math.random() * (base / 2))
}

export const connectLive = (token: string, handlers: LiveHandlers): (() => void) => {
  let socket: WebSocket | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let attempt = 0
  let stopped = false

  const open = () => {
    handlers.onState({ state: "connecting" })
    const ws = new WebSocket(socketUrl())
    socket = ws
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "auth", token }))
      ws.send(JSON.stringify({ type: "subscribe", channel: "notifications" }))
    }
    ws.onmessage = (message) => {
      let frame: ServerFrame
      try {
        frame = JSON.parse(String(message.data)) as ServerFrame
      } catch {
        return
      }
      if (frame.type === "subscribed") {
        attempt = 0
        handlers.onState({ state: "live" })
        handlers.onSubscribed()
      } else if (frame.type === "event" && frame.channel === "notifications") {
        handlers.onEvent(frame.data as NotificationEvent)
      } else if (frame.type === "error" && frame.code === "UNAUTHORIZED") {
        stop()
        handlers.onUnauthorized()
      }
    }
    ws.onclose = (event) => {
      if (stopped || socket !== ws) return
      if (event.code === CLOSE_UNAUTHORIZED) {
        stop()
        handlers.onUnauthorized()
        return
      }
      const delay = backoffMs(attempt++)
      handlers.onState({ state: "offline", retryInSeconds: Math.ceil(delay / 1000) })
      timer = setTimeout(open, delay)
    }
  }

  const stop = () => {
    stopped = true
    clearTimeout(timer)
    socket?.close(1000)
  }

  open()
  return stop
}
