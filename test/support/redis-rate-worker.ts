/**
 * A second gateway process for test/redis.test.ts: connects to the same Redis,
 * says "ready", waits for "go" on stdin, then consumes WORKER_HITS times
 * concurrently on one key and prints `{"allowed": n}`.
 */
import { Context, Effect, Layer } from "effect"
import { platformRedisLayer, RateLimits } from "../../src/platform/redis/index.js"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

const url = env("REDIS_URL")
const keyPrefix = env("WORKER_KEY_PREFIX")
const key = env("WORKER_KEY")
const limit = Number(env("WORKER_LIMIT"))
const windowMs = Number(env("WORKER_WINDOW_MS"))
const hits = Number(env("WORKER_HITS"))

const waitForGo = Effect.callback<void>((resume) => {
  let buffered = ""
  process.stdin.setEncoding("utf8")
  process.stdin.on("data", (chunk: string) => {
    buffered += chunk
    if (buffered.includes("go")) resume(Effect.void)
  })
})

const program = Effect.gen(function* () {
  const context = yield* Layer.build(platformRedisLayer(url, { keyPrefix }))
  const rateLimits = Context.get(context, RateLimits)
  process.stdout.write("ready\n")
  yield* waitForGo
  const results = yield* Effect.forEach(
    Array.from({ length: hits }, () => key),
    (k) => rateLimits.consume(k, limit, windowMs),
    { concurrency: "unbounded" }
  )
  process.stdout.write(`${JSON.stringify({ allowed: results.filter((r) => r.allowed).length })}\n`)
})

Effect.runPromise(Effect.scoped(program)).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
