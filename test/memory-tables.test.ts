/** The in-memory tables under the stores' `layerMemory`: a failed transaction leaves nothing behind, as in SQL. */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { memoryTables } from "../src/platform/db/memory.js"

describe("memoryTables", () => {
  it.effect("keeps what a transaction wrote when it succeeds and undoes all of it when it fails", () =>
    Effect.gen(function* () {
      const tables = memoryTables({ rows: [] as string[], counts: new Map<string, number>() })
      const write = (row: string) =>
        Effect.sync(() => {
          tables.state.rows.push(row)
          tables.state.counts.set(row, (tables.state.counts.get(row) ?? 0) + 1)
        })
      yield* tables.transaction(write("kept"))
      const failed = yield* Effect.flip(tables.transaction(Effect.andThen(write("lost"), Effect.fail("refused"))))
      expect(failed).toBe("refused")
      expect(tables.state.rows).toEqual(["kept"])
      expect([...tables.state.counts]).toEqual([["kept", 1]])
    })
  )

  it.effect("a failed inner transaction that the outer one recovers from undoes only its own writes", () =>
    Effect.gen(function* () {
      const tables = memoryTables({ rows: [] as string[] })
      const write = (row: string) => Effect.sync(() => void tables.state.rows.push(row))
      yield* tables.transaction(
        Effect.gen(function* () {
          yield* write("outer")
          yield* Effect.ignore(tables.transaction(Effect.andThen(write("inner"), Effect.fail("no"))))
          yield* write("after")
        })
      )
      expect(tables.state.rows).toEqual(["outer", "after"])
    })
  )
})
