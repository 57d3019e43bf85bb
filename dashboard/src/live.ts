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
  /** Frames of channels added with `subscribe` (e.g. `case:<id>`); `data` is as the server sent it. */
  readonly onChannelEvent?: (channel: string, data: unknown) => void
  /** After each (re)subscription to an added channel: reload what may have been missed. */
  readonly onChannelSubscribed?: (channel: string) => void
}

/** Stops the connection when called; pages add channels for as long as they show them. */
export interface LiveConnection {
  (): void
  readonly subscribe: (channel: string) => void
  readonly unsubscribe: (channel: string) => void
}

const CLOSE_UNAUTHORIZED = 4401
const MAX_DELAY_MS = 30_000

export const socketUrl = () => `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/api/v1/ws`

export const backoffMs = (attempt: number) => {
  const base = Math.min(MAX_DELAY_MS, 500 * 2 ** attempt)
  return Math.round(base / 2 + Math.random() * (base / 2))
}

export const connectLive = (token: string, handlers: LiveHandlers): LiveConnection => {
  let socket: WebSocket | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let attempt = 0
  let stopped = false
  // Added channels, subscribed again on every reconnect.
  const channels = new Set<string>()
  const send = (frame: unknown) => {
    if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame))
  }

  const open = () => {
    handlers.onState({ state: "connecting" })
    const ws = new WebSocket(socketUrl())
    socket = ws
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: "auth", token }))
      ws.send(JSON.stringify({ type: "subscribe", channel: "notifications" }))
      for (const channel of channels) ws.send(JSON.stringify({ type: "subscribe", channel }))
    }
    ws.onmessage = (message) => {
      let frame: ServerFrame
      try {
        frame = JSON.parse(String(message.data)) as ServerFrame
      } catch {
        return
      }
      if (frame.type === "subscribed" && frame.channel !== "notifications") {
        if (channels.has(frame.channel)) handlers.onChannelSubscribed?.(frame.channel)
      } else if (frame.type === "event" && frame.channel !== "notifications") {
        if (channels.has(frame.channel)) handlers.onChannelEvent?.(frame.channel, frame.data)
      } else if (frame.type === "subscribed") {
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
  return Object.assign(stop, {
    subscribe: (channel: string) => {
      if (channels.has(channel)) return
      channels.add(channel)
      // Not open yet: `onopen` subscribes it.
      send({ type: "subscribe", channel })
    },
    unsubscribe: (channel: string) => {
      if (channels.delete(channel)) send({ type: "unsubscribe", channel })
    }
  })
}
