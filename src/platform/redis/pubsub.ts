/**
 * Cross-process fan-out for the WebSocket layer. Every gateway process
 * subscribes once (one PSUBSCRIBE on `<prefix>*` over a dedicated connection)
 * and re-publishes what arrives to its local uWS topics. A publisher does not
 * deliver locally by itself: its own message comes back through the
 * subscription like everyone else's, so every process takes the same path.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { RedisClient } from "./connection.js"

export type FanoutHandler = (topic: string, message: string) => void

export interface FanoutSubscribeOptions {
  /** Only topics starting with this are handed to the handler. */
  readonly topicPrefix?: string
}

export interface FanoutRedisOptions {
  /** Redis channel prefix for every topic (default `"gw:"`). */
  readonly channelPrefix?: string
}

export class Fanout extends Context.Service<
  Fanout,
  {
    /** Sends `message` to every subscriber of every process. */
    readonly publish: (topic: string, message: string) => Effect.Effect<void>
    /**
     * Calls `handler` for every message published on any topic (or those under
     * `topicPrefix`) until the scope closes. Messages published after this
     * effect completes are delivered.
     */
    readonly subscribe: (
      handler: FanoutHandler,
      options?: FanoutSubscribeOptions
    ) => Effect.Effect<void, never, Scope.Scope>
  }
>()("platform/redis/Fanout") {
  /** Redis pub/sub; needs `NodeRedis`. One subscriber connection per process, opened at the first subscribe. */
  static readonly layerRedis = (options: FanoutRedisOptions = {}): Layer.Layer<Fanout, never, RedisClient> =>
    Layer.effect(
      Fanout,
      Effect.gen(function* () {
        const { client } = yield* RedisClient
        const channelPrefix = options.channelPrefix ?? "gw:"
        const logWarning = yield* warningLogger
        const handlers = new HandlerSet(logWarning)
        let subscriber: Promise<ReturnType<typeof client.duplicate>> | undefined

        const openSubscriber = async () => {
          const connection = client.duplicate()
          // An unhandled `error` event would crash the process; node-redis reconnects and re-subscribes.
          connection.on("error", (cause: unknown) => logWarning("redis fan-out subscriber error", cause))
          try {
            await connection.connect()
            await connection.pSubscribe(`${escapeGlob(channelPrefix)}*`, (message, channel) => {
              handlers.deliver(channel.slice(channelPrefix.length), message)
            })
            return connection
          } catch (cause) {
            // Otherwise the half-open duplicate would keep reconnecting in the background.
            if (connection.isOpen) connection.destroy()
            throw cause
          }
        }

        yield* Effect.addFinalizer(() => {
          const opened = subscriber
          if (opened === undefined) return Effect.void
          return Effect.promise(() =>
            opened.then(
              (connection) => {
                if (connection.isOpen) connection.destroy()
              },
              () => undefined
            )
          )
        })

        const ensureSubscriber = Effect.promise(() => {
          if (subscriber === undefined) {
            subscriber = openSubscriber()
            // A failed attempt is not cached: the next subscribe tries again.
            subscriber.catch(() => {
              subscriber = undefined
            })
          }
          return subscriber
        })

        return Fanout.of({
          publish: (topic, message) =>
            Effect.asVoid(Effect.promise(() => client.publish(channelPrefix + topic, message))),
          subscribe: (handler, subscribeOptions) =>
            Effect.andThen(ensureSubscriber, handlers.addScoped(handler, subscribeOptions?.topicPrefix))
        })
      })
    )

  /** In-process delivery, on a microtask after `publish`. */
  static readonly layerMemory: Layer.Layer<Fanout> = Layer.effect(
    Fanout,
    Effect.gen(function* () {
      const handlers = new HandlerSet(yield* warningLogger)
      return Fanout.of({
        publish: (topic, message) =>
          Effect.sync(() => {
            queueMicrotask(() => handlers.deliver(topic, message))
          }),
        subscribe: (handler, options) => handlers.addScoped(handler, options?.topicPrefix)
      })
    })
  )
}

/** The local listeners of one Fanout instance. */
class HandlerSet {
  private readonly entries = new Set<{ readonly handler: FanoutHandler; readonly topicPrefix: string }>()

  constructor(private readonly logWarning: (message: string, cause: unknown) => void) {}

  addScoped(handler: FanoutHandler, topicPrefix = ""): Effect.Effect<void, never, Scope.Scope> {
    return Effect.acquireRelease(
      Effect.sync(() => {
        const entry = { handler, topicPrefix }
        this.entries.add(entry)
        return entry
      }),
      (entry) => Effect.sync(() => this.entries.delete(entry))
    ).pipe(Effect.asVoid)
  }

  deliver(topic: string, message: string): void {
    for (const entry of this.entries) {
      if (!topic.startsWith(entry.topicPrefix)) continue
      try {
        entry.handler(topic, message)
      } catch (cause) {
        // One failing listener must not starve the others.
        this.logWarning("fan-out handler failed", cause)
      }
    }
  }
}

/** Logs from plain callbacks (node-redis events, handlers) through the layer's logger. */
const warningLogger = Effect.map(Effect.context<never>(), (context) => {
  const run = Effect.runForkWith(context)
  return (message: string, cause: unknown): void => {
    run(Effect.logWarning(message, cause))
  }
})

/** Escapes Redis glob metacharacters so the prefix matches literally. */
const escapeGlob = (value: string): string => value.replace(/[*?[\]\\]/g, (c) => `\\${c}`)
