/**
 * DATABASE_MAX_CONNECTIONS bounds the running server's pool: with the webhooks table locked by
 * this test, a burst of webhook registrations waits in the database, and the server opens as
 * many connections as it may and no more (the default, 10, would open more for this burst).
 */
import { PgClient } from "@effect/sql-pg"
import { expect } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import { SqlClient } from "effect/sql"
import { client, register } from "./support/api.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

const POOL = 3

/** Connections the server holds (its pool, including the one the outbox LISTENs on). */
const serverConnections = (sql: SqlClient.SqlClient) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = 'accountability-gateway'`.pipe(
    Effect.map((rows) => rows[0]!.n)
  )

liveLayer(Gateway.layer({ DATABASE_MAX_CONNECTIONS: String(POOL) }))((it) => {
  it.effect("the server's pool never opens more connections than DATABASE_MAX_CONNECTIONS", () =>
    Effect.gen(function* () {
      const server = yield* Gateway
      expect(server.config.databaseMaxConnections).toBe(POOL)
      const owner = yield* register("Pool Co")
      const api = yield* client(owner.key)
      const observer = yield* Effect.provide(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          // One connection holds the lock in a transaction; the other counts, until the burst is parked.
          const taken = yield* Deferred.make<void>()
          const locked = yield* Effect.forkChild(
            sql.withTransaction(Effect.andThen(sql`LOCK TABLE webhooks IN SHARE MODE`, Effect.andThen(Deferred.succeed(taken, undefined), Effect.never)))
          )
          yield* Deferred.await(taken)
          const burst = yield* Effect.forkChild(
            Effect.forEach(
              Array.from({ length: 400 }, (_, index) => index),
              (index) => api.webhooks.create({ payload: { url: `https://hooks.example.com/${index}` } }),
              { concurrency: "unbounded", discard: true }
            )
          )
          // Wait until the pool is full, then check it does not grow past its size.
          const parked = yield* serverConnections(sql).pipe(
            Effect.repeat({ schedule: Schedule.spaced("100 millis"), until: (n) => n >= POOL, times: 100 }),
            // Kept: a while at the full pool, for an extra connection (there is no event for one not opening) to show.
            Effect.andThen(Effect.sleep("500 millis")),
            Effect.andThen(serverConnections(sql))
          )
          yield* Fiber.interrupt(locked)
          yield* Fiber.join(burst)
          return parked
        }),
        PgClient.layer({ url: Redacted.make(server.config.databaseUrl!), maxConnections: 2, applicationName: "pool-test" })
      )
      expect(observer).toBe(POOL)
      expect((yield* api.webhooks.list({})).length).toBe(400)
    })
  )
})
