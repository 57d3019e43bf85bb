/**
 * The cluster runner the actors live on.
 *
 * - Default (`CLUSTER_MODE=memory`): one process, in-memory sharding. Messages
 *   are volatile, so no message storage is needed. `maxResidentEntities` is set
 *   from config (the library default, 10,000, would refuse the 10,001st agent)
 *   and idle entities are passivated so memory stays bounded. The agents'
 *   workers are held in the process (`localAgentMailboxLayer`), dropped when idle.
 * - `CLUSTER_MODE=sql`: several processes share the Postgres database for
 *   runner and shard bookkeeping and talk to each other over sockets
 *   (`RUNNER_HOST`/`RUNNER_PORT` is this runner's address).
 */
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as Runners from "effect/cluster/Runners"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { agentWorkLayer } from "../src/actions/transitions.js"
import type { AppConfig } from "../src/platform/config.js"
import { agentActorLayer, agentMailboxLayer, localAgentMailboxLayer } from "./agent.js"
import { orgActorsLayer } from "./org.js"

export type ClusterMode = "memory" | "sql"

export interface RunnerOptions {
  readonly clusterMode: ClusterMode
  readonly runnerHost: string
  readonly runnerPort: number
  readonly maxResidentEntities: number
  readonly entityMaxIdleMs: number
}

export const runnerOptions = (config: AppConfig): RunnerOptions => ({
  clusterMode: config.clusterMode,
  runnerHost: config.runnerHost,
  runnerPort: config.runnerPort,
  maxResidentEntities: config.maxResidentEntities,
  entityMaxIdleMs: 60_000
})

/** Single process: sharding with no peers, no runner health checks and no message storage (every message is volatile). */
export const memoryRunner = (options: Pick<RunnerOptions, "maxResidentEntities" | "entityMaxIdleMs">) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(MessageStorage.layerNoop),
    Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer({ maxResidentEntities: options.maxResidentEntities, entityMaxIdleTime: options.entityMaxIdleMs }))
  )

/** Several processes over the shared Postgres; needs SqlClient. */
export const sqlRunner = (options: RunnerOptions) =>
  NodeClusterSocket.layer({
    storage: "sql",
    // Measured here: with the default binary (msgpack) framing about half of the
    // runs left remote Transition calls unanswered; ndjson answered all of them.
    serialization: "ndjson",
    shardingConfig: {
      runnerAddress: Option.some(RunnerAddress.make(options.runnerHost, options.runnerPort)),
      maxResidentEntities: options.maxResidentEntities,
      entityMaxIdleTime: options.entityMaxIdleMs
    }
  })

export const runnerLayer = (options: RunnerOptions) => (options.clusterMode === "sql" ? Layer.orDie(sqlRunner(options)) : memoryRunner(options))

/**
 * The actors and their runner: the agents' workers (AgentActor entities behind
 * the cluster with several processes; with one process, the same workers held
 * in the process, without the cluster's RPC) and OrgActor (the entity and
 * OrgSnapshots). Needs SqlClient, Fanout, Events, ReceiptMinter and ActionCommits.
 */
export const actorsLayer = (config: AppConfig) => {
  const options = runnerOptions(config)
  const agents =
    options.clusterMode === "sql"
      ? Layer.mergeAll(agentActorLayer({ maxIdleMs: options.entityMaxIdleMs }).pipe(Layer.provide(agentWorkLayer)), agentMailboxLayer)
      : localAgentMailboxLayer({ maxIdleMs: options.entityMaxIdleMs }).pipe(Layer.provide(agentWorkLayer))
  return Layer.mergeAll(agents, orgActorsLayer({ maxIdleMs: options.entityMaxIdleMs })).pipe(Layer.provide(runnerLayer(options)))
}
