/**
 * The crash test (test/crash/crash.ts) at CI size: SIGKILLs of the real server
 * process under authorize+notarize load, restarts on the same storage, then
 * every acknowledged receipt and every agent chain is checked; the second run
 * puts 64 clients on 4 agents so kills land while batches commit. The chains'
 * agents are registered, and one more client registers agents and publishes
 * versions through the kills, another runs consensus cases with idempotency keys
 * (retrying each key across kills), and one keeps an escrow account and settles
 * the receipts; each acknowledged one must be there, and the log must extend every
 * settlement and prove every acknowledged receipt; one files DORA incidents and compliance
 * reports, each of which must be there and verify, with none left half made. Postgres
 * when DATABASE_URL is set, the embedded default (its own PostgreSQL in a
 * temporary DATA_DIR) otherwise.
 */
import { describe, expect, it } from "vitest"
import { type CrashOptions, runCrashTest } from "./crash/crash.js"

/** Runs the crash test and checks nothing acknowledged was lost and the load really ran across the kills. */
const expectIntactAfter = async (options: Required<Pick<CrashOptions, "kills" | "clients" | "agents" | "minAcksPerLife">> & CrashOptions) => {
  const report = await runCrashTest(options)
  expect(report.problems).toEqual([])
  expect(report.kills).toBe(options.kills)
  expect(report.casesRun).toBeGreaterThan(0)
  expect(report.acknowledged).toBeGreaterThanOrEqual(options.kills * options.minAcksPerLife)
  // Every receipt sits in some chain.
  expect(report.chainedReceipts).toBeGreaterThanOrEqual(report.acknowledged)
  expect(Object.keys(report.chains)).toHaveLength(options.agents)
  expect(report.registeredAgents).toBeGreaterThan(0)
  expect(report.deposits).toBeGreaterThan(0)
  expect(report.settlements).toBeGreaterThan(0)
  expect(report.reports).toBeGreaterThan(0)
  expect(report.incidents).toBeGreaterThan(0)
}

describe("crash safety", () => {
  it("keeps every acknowledged receipt and every chain intact across five SIGKILLs", () =>
    expectIntactAfter({ kills: 5, clients: 8, agents: 10, minLifeMs: 300, maxLifeMs: 900, minAcksPerLife: 3, finalLoadMs: 500 }), 240_000)

  it("keeps them intact when many requests per agent are committed together (group commit at load)", () =>
    expectIntactAfter({ kills: 3, clients: 64, agents: 4, minLifeMs: 400, maxLifeMs: 1_000, minAcksPerLife: 20, finalLoadMs: 500 }), 240_000)
})
