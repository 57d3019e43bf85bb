/**
 * The crash test (test/crash/crash.ts) at CI size: five SIGKILLs of the real
 * server process under authorize+notarize load, restarts on the same storage,
 * then every acknowledged receipt and every agent chain is checked. Postgres
 * when DATABASE_URL is set, the embedded default (its own PostgreSQL in a
 * temporary DATA_DIR) otherwise.
 */
import { describe, expect, it } from "vitest"
import { runCrashTest } from "./crash/crash.js"

describe("crash safety", () => {
  it("keeps every acknowledged receipt and every chain intact across five SIGKILLs", async () => {
    const report = await runCrashTest({ kills: 5, clients: 8, agents: 10, minLifeMs: 300, maxLifeMs: 900, minAcksPerLife: 3, finalLoadMs: 500 })
    expect(report.problems).toEqual([])
    expect(report.kills).toBe(5)
    // The load really ran across the kills, and every receipt sits in some chain.
    expect(report.acknowledged).toBeGreaterThanOrEqual(5 * 3)
    expect(report.chainedReceipts).toBeGreaterThanOrEqual(report.acknowledged)
    expect(Object.keys(report.chains)).toHaveLength(10)
  }, 240_000)
})
