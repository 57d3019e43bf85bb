/**
 * Live drift counts across gateway processes: each process tells the others, through the fan-out
 * channel, of the actions it recorded (batched every 50 ms), and counts theirs into the windows it
 * holds. Without Redis there is one process and nothing to tell.
 */
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type { Scope } from "effect/Scope"
import type { RecordedAction } from "../actions/ports.js"
import { newId } from "../platform/ids.js"
import { logLine } from "../platform/log.js"
import type { Fanout } from "../platform/redis/index.js"

export const DRIFT_ACTIONS_TOPIC = "drift-actions"
const FLUSH_MS = 50
const BATCH = 500

type Compact = readonly [org: string, agent: string, type: string, createdAt: string]

export const shareRecordedActions = (
  fanout: Fanout["Service"],
  recordLocally: (action: RecordedAction) => Effect.Effect<void>
): Effect.Effect<(action: RecordedAction) => Effect.Effect<void>, never, Scope> =>
  Effect.gen(function* () {
    const origin = newId("node")
    let outbox: Compact[] = []
    let timer: ReturnType<typeof setTimeout> | undefined
    // Publishes run in this scope's fiber set (interrupted when it closes); a failed one is logged with its cause.
    const runFork = yield* FiberSet.makeRuntime()

    const publish = (actions: Compact[]) =>
      fanout.publish(DRIFT_ACTIONS_TOPIC, JSON.stringify({ origin, actions })).pipe(
        Effect.catchCause((cause) => Effect.logWarning("drift: a batch of recorded actions could not be shared with the other processes", cause))
      )

    const take = () => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      const actions = outbox
      outbox = []
      return actions
    }

    const flush = () => {
      const actions = take()
      if (actions.length > 0) runFork(publish(actions))
    }

    yield* fanout.subscribe(
      (_topic, message) => {
        try {
          const batch = JSON.parse(message) as { origin: string; actions: Compact[] }
          if (batch.origin === origin) return
          for (const [org_uuid, agent_id, action_type, created_at] of batch.actions) {
            Effect.runSync(recordLocally({ org_uuid, agent_id, action_type, created_at }))
          }
        } catch (cause) {
          logLine("warn", "drift: an action batch from another process could not be read", { error: String(cause) })
        }
      },
      { topicPrefix: DRIFT_ACTIONS_TOPIC }
    )
    // The last batch is published before the scope closes, not forked into a set that is closing.
    yield* Effect.addFinalizer(() => Effect.suspend(() => {
      const actions = take()
      return actions.length > 0 ? publish(actions) : Effect.void
    }))

    return (action: RecordedAction) =>
      Effect.flatMap(recordLocally(action), () =>
        Effect.sync(() => {
          if (action.agent_id === null) return
          outbox.push([action.org_uuid, action.agent_id, action.action_type, action.created_at])
          if (outbox.length >= BATCH) flush()
          else if (timer === undefined) timer = setTimeout(flush, FLUSH_MS).unref()
        })
      )
  })
