/** Background rounds that fail are logged with their cause and counted; a store's undecodable row is a defect naming the row. */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { reportFailure, supervisedRound } from "../src/platform/background.js"
import { Count, JsonObject, Timestamp } from "../src/platform/columns.js"
import * as Rows from "../src/platform/db/rows.js"
import { sqlDefects, UndecodableRow } from "../src/platform/db/store.js"
import { loggerLayer } from "../src/platform/log.js"
import { metricsText } from "../src/platform/metrics.js"
import { captureLog } from "./support/log.js"

const failuresOf = (loop: string) => {
  const line = metricsText()
    .split("\n")
    .find((text) => text.startsWith("background_failures_total") && text.includes(`loop="${loop}"`))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

describe("background rounds", () => {
  it("log a failed round with its cause, count it, and answer the fallback", async () => {
    const { result, lines } = await captureLog(() =>
      Effect.runPromise(supervisedRound("test loop", Effect.fail(new Error("disk on fire")), 0).pipe(Effect.provide(loggerLayer)))
    )
    expect(result).toBe(0)
    const line = lines.find((entry) => entry.msg === "test loop failed")
    expect(line?.level).toBe("error")
    expect(JSON.stringify(line)).toContain("disk on fire")
    expect(failuresOf("test loop")).toBe(1)
  })

  it("let an interruption through without counting it", async () => {
    const exit = await Effect.runPromiseExit(reportFailure("quiet loop", Cause.interrupt()))
    expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
    expect(failuresOf("quiet loop")).toBe(0)
  })
})

describe("the database boundary", () => {
  const Row = Schema.Struct({ id: Schema.String, created_at: Timestamp, total: Count, details: JsonObject })
  const decodeRows = Rows.findAll({ Request: Schema.Array(Schema.Unknown), Result: Row, execute: (rows) => Effect.succeed(rows) })

  it("turns a row that does not decode into a defect naming the row", async () => {
    const store = sqlDefects({ list: (rows: ReadonlyArray<unknown>) => decodeRows(rows) })
    const good = { id: "a", created_at: new Date(0), total: 3n, details: {} }
    expect(await Effect.runPromise(store.list([good]))).toEqual([{ id: "a", created_at: "1970-01-01T00:00:00.000Z", total: 3, details: {} }])
    for (const broken of [{ created_at: null }, { total: null }, { details: null }, { details: "{not json" }, { created_at: "yesterday" }]) {
      const exit = await Effect.runPromiseExit(store.list([good, { ...good, id: "row-7", ...broken }]))
      const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
      expect(defect).toBeInstanceOf(UndecodableRow)
      expect((defect as UndecodableRow).rowId).toBe("row-7")
      expect(String((defect as UndecodableRow).message)).toContain("id row-7")
    }
  })

  it("lets the domain's own failures through", async () => {
    const store = sqlDefects({ find: (id: string) => (id === "x" ? Effect.fail("missing" as const) : Effect.succeed(id)) })
    expect(await Effect.runPromiseExit(store.find("x"))).toEqual(Exit.fail("missing"))
  })
})
