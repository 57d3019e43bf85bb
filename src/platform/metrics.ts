/**
 * The gateway's Prometheus metrics: Effect `Metric`s kept in a registry of
 * their own and rendered at `/metrics` (on the metrics listener, src/system/metrics-listener.ts)
 * by Effect's Prometheus text exposition (`PrometheusMetrics` of `effect/observability`).
 *
 * A registry of its own, not Effect's default one: the cluster runtime records
 * into the default registry too, some series per entity id (one per resident
 * actor), and the scrape must stay bounded by the route table.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { PrometheusMetrics } from "effect/observability"

const registry: Metric.MetricRegistry = new Map()

/** The context metric updates and the exposition read: it names the gateway's registry. */
const metricsContext = Context.make(Metric.MetricRegistry, registry) as Context.Context<never>

/**
 * Adds `input` to a metric of the gateway's registry, without a fiber (the
 * transport records a request after its fiber has ended). Cheap enough per
 * request: the metric finds its series with one map look-up.
 */
export const record = <Input>(metric: Metric.Metric<Input, unknown>, input: Input): void => metric.updateUnsafe(input, metricsContext)

/** The Prometheus text exposition of every series recorded so far. */
export const metricsText = (): string => PrometheusMetrics.formatUnsafe(metricsContext)
export const renderMetrics: Effect.Effect<string> = Effect.sync(metricsText)
