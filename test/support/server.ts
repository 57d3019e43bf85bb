/**
 * Boots the real server (uWS, HttpApi, all services) in this process on a port
 * the system chooses (PORT=0: no race with other processes), against a fresh database (on DATABASE_URL's server, else the run's
 * embedded PostgreSQL), and the shared Redis when REDIS_URL is set, otherwise
 * the in-process stand-ins.
 */
import { randomBytes } from "node:crypto"
import { createServer } from "node:net"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { appLayer } from "../../src/app.js"
import { type AppConfig, Config, loadConfig } from "../../src/platform/config.js"
import { setLogLevel } from "../../src/platform/log.js"
import { freshDatabaseUrl, UNUSED_DATA_DIR } from "./database.js"
import { useFixture } from "./fixture.js"

export interface TestServer {
  /** The server's own address (its BASE_URL, with the port it bound). */
  readonly url: string
  /** The configuration the services run with (the bound port, and the BASE_URL derived from it). */
  readonly config: AppConfig
  /** Runs an effect with the running server's services (its database, Events, ReceiptMinter, ...). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  readonly stop: () => Promise<void>
}

/** A port free right now, for what cannot bind port 0 itself (other processes, cluster runners); another process may take it first. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

export type ServerEnv = Record<string, string | undefined>

export const startServer = async (env: ServerEnv = {}): Promise<TestServer> => {
  setLogLevel((process.env.TEST_LOG_LEVEL as any) ?? "silent")
  const database = env.DATABASE_URL === undefined ? await freshDatabaseUrl() : undefined
  const config = loadConfig({
    ...process.env,
    // The server binds a port the system chooses and derives its BASE_URL from it (test/support/setup.ts unsets vitest's "/").
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: UNUSED_DATA_DIR,
    MASTER_KEY: "0000000000000000000000000000000000000000000000000000000000000001",
    RATE_LIMIT_PER_MINUTE: "100000",
    // Tests refuse many credentials from 127.0.0.1 on purpose; those about the failure budget set their own.
    AUTH_FAILURES_PER_MINUTE: "100000",
    ADMIN_KEY: "test-admin-key",
    DATABASE_URL: database?.url ?? env.DATABASE_URL ?? "",
    // Each server counts its own rate limits on the shared Redis unless a test shares a prefix on purpose.
    REDIS_KEY_PREFIX: `test-${process.pid}-${randomBytes(4).toString("hex")}:`,
    ...env
  })
  const scope = Effect.runSync(Scope.make())
  let context: Context.Context<any>
  try {
    context = await Effect.runPromise(Layer.buildWithScope(appLayer(config), scope))
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await database?.drop()
    throw error
  }
  const bound = Context.get(context, Config)
  return {
    url: bound.baseUrl,
    config: bound,
    run: (effect) => Effect.runPromise(Effect.provide(effect, context)),
    stop: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await database?.drop()
    }
  }
}

/**
 * The file's server: started before its first test, stopped after its last.
 * `env` may be a function, read when the server starts (for the address of a fixture made before it).
 */
export const useServer = (env: ServerEnv | (() => ServerEnv) = {}): TestServer =>
  useFixture(
    () => startServer(typeof env === "function" ? env() : env),
    (server) => server.stop()
  )

/** The running test server, for tests written as Effects (`layer(Gateway.layer())` from @effect/vitest). */
export class Gateway extends Context.Service<Gateway, TestServer>()("test/Gateway") {
  static readonly layer = (env: ServerEnv = {}) =>
    Layer.effect(
      Gateway,
      Effect.acquireRelease(
        Effect.promise(() => startServer(env)),
        (server) => Effect.promise(() => server.stop())
      )
    )
}
