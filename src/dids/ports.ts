/**
 * What agent cards ask of the reputation area (which itself resolves DIDs here, so it cannot be a
 * dependency of this one): the agent's current score. Implemented in `src/reputation/`.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export class AgentScores extends Context.Service<
  AgentScores,
  {
    /** The agent's score now (a snapshot when its inputs changed); null when there is no such agent. */
    readonly scoreOf: (slug: string) => Effect.Effect<number | null>
  }
>()("gateway/AgentScores") {}
