/** Shared pieces for suites written as Effects with @effect/vitest. */
import { layer } from "@effect/vitest"
import type * as Layer from "effect/Layer"

/**
 * `layer(setup)` of @effect/vitest for a suite on real infrastructure (a
 * database, the test server): one build for the block, torn down after it, on
 * the real clock (services stamp rows with the time and sweep on timers, tests
 * wait for them), with time for a database or server to start.
 */
export const liveLayer = <R, E>(setup: Layer.Layer<R, E>) => layer(setup, { timeout: "120 seconds", excludeTestServices: true })
