/** What every page of a signed-in user shares: the session, the live channel and announcements for screen readers. */
import { createContext } from "preact"
import { useContext, useEffect, useRef, useState } from "preact/hooks"
import type { LiveState } from "./live.ts"
import type { Session } from "./session.ts"
import type { NotificationEvent } from "./types.ts"

export interface LiveListener {
  readonly onEvent?: (event: NotificationEvent) => void
  /** After each (re)subscription: reload what may have changed while offline. */
  readonly onSubscribed?: () => void
}

export interface AppContext {
  readonly session: Session
  readonly live: LiveState
  readonly listen: (listener: LiveListener) => () => void
  readonly announce: (message: string) => void
  /** Subscribes the tab's socket to an extra channel (e.g. `case:<id>`) until the returned function is called. */
  readonly watch: (channel: string, listener: ChannelListener) => () => void
}

export const App = createContext<AppContext | undefined>(undefined)

export const useApp = (): AppContext => {
  const app = useContext(App)
  if (app === undefined) throw new Error("useApp outside a signed-in page")
  return app
}

/** Registers for live events for the component's lifetime; the latest callbacks are always used. */
export const useLive = (listener: LiveListener) => {
  const { listen } = useApp()
  const latest = useRef(listener)
  latest.current = listener
  useEffect(() => listen({ onEvent: (event) => latest.current.onEvent?.(event), onSubscribed: () => latest.current.onSubscribed?.() }), [listen])
}

/** The current time, updated every `everyMs` (for "time left"). */
export const useNow = (everyMs = 15_000) => {
  const [now, setNow] = useState(Date.now)
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}

export interface ChannelListener {
  readonly onEvent?: (data: unknown) => void
  /** After each (re)subscription: reload what may have changed while offline. */
  readonly onSubscribed?: () => void
}

/** Watches one extra live channel for the component's lifetime; the latest callbacks are always used. */
export const useChannel = (channel: string, listener: ChannelListener) => {
  const { watch } = useApp()
  const latest = useRef(listener)
  latest.current = listener
  useEffect(() => watch(channel, { onEvent: (data) => latest.current.onEvent?.(data), onSubscribed: () => latest.current.onSubscribed?.() }), [watch, channel])
}
