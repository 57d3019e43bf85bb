/**
 * Rate limits with RATE_LIMIT_PER_MINUTE=5: the sixth request is 429 with the
 * headers; two gateway processes sharing one Redis still admit exactly 5, and
 * count one address's failed authentications together.
 */
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { callFrom, freshAddress } from "./support/address.js"
import { call, registerOrg } from "./support/client.js"
import { freshDatabaseUrl } from "./support/database.js"
import { spawnServer } from "./support/process.js"
import { useServer } from "./support/server.js"

describe("per-key rate limit", () => {
  const server = useServer({ RATE_LIMIT_PER_MINUTE: "5", PUBLIC_RATE_LIMIT_PER_MINUTE: "1000" })

  it("admits 5 and refuses the sixth with Retry-After and RateLimit headers", async () => {
    const org = await registerOrg(server.url)
    const statuses: number[] = []
    let last: Awaited<ReturnType<typeof call<any>>> | undefined
    for (let i = 0; i < 6; i++) {
      last = await call(server.url, "GET", "/api/v1/team/members", { token: org.key })
      statuses.push(last.status)
      if (i === 0) {
        // Admitted requests carry the state too.
        expect(last.headers.get("ratelimit-policy")).toMatch(/q=5;w=60/)
        expect(last.headers.get("ratelimit")).toMatch(/r=4/)
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(last!.body.code).toBe("RATE_LIMIT_EXCEEDED")
    expect(last!.body.error).toBe(last!.body.message)
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(last!.headers.get("ratelimit-policy")).toMatch(/q=5;w=60/)
    expect(last!.headers.get("ratelimit")).toMatch(/r=0/)
  })

  it("counts each key separately", async () => {
    const org = await registerOrg(server.url)
    const other = await registerOrg(server.url)
    for (let i = 0; i < 5; i++) await call(server.url, "GET", "/api/v1/team/members", { token: org.key })
    expect((await call(server.url, "GET", "/api/v1/team/members", { token: other.key })).status).toBe(200)
  })
})

describe("public routes are limited per client IP", () => {
  const server = useServer({ PUBLIC_RATE_LIMIT_PER_MINUTE: "3" })

  it("the fourth login attempt from one address is 429", async () => {
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) {
      statuses.push((await call(server.url, "POST", "/api/v1/auth/login", { body: { email: "x@example.test", password: "whatever long" } })).status)
    }
    expect(statuses).toEqual([401, 401, 401, 429])
  })
})

const shared = Boolean(process.env.REDIS_URL)
if (!shared) console.log("rate-limit: the two-process test needs REDIS_URL; it did not run")

/** Two gateway processes on one fresh database and the shared Redis, for `body`; stopped after it. */
const withTwoProcesses = async (env: Record<string, string>, body: (first: string, second: string) => Promise<void>) => {
  const database = await freshDatabaseUrl()
  const shared = {
    DATABASE_URL: database.url,
    REDIS_URL: process.env.REDIS_URL!,
    MASTER_KEY: "1111111111111111111111111111111111111111111111111111111111111111",
    DATA_DIR: `/tmp/gw-rate-${process.pid}`,
    ...env
  }
  const first = await spawnServer(shared)
  const second = await spawnServer(shared)
  try {
    await body(first.url, second.url)
  } finally {
    await first.stop()
    await second.stop()
    await database.drop()
  }
}

describe.runIf(shared)("two gateway processes sharing Redis", () => {
  it("admit exactly 5 requests of one key in total", () =>
    withTwoProcesses({ RATE_LIMIT_PER_MINUTE: "5", PUBLIC_RATE_LIMIT_PER_MINUTE: "1000" }, async (first, second) => {
      const org = await registerOrg(first)
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => call(i % 2 ? second : first, "GET", "/api/v1/team/members", { token: org.key }))
      )
      expect(replies.filter((reply) => reply.status === 200).length).toBe(5)
      expect(replies.filter((reply) => reply.status === 429).length).toBe(15)
    }))

  it("count failed authentications of one address together: past the budget both processes answer 429", () =>
    withTwoProcesses(
      // Its own key prefix: the address's count must start from zero whatever else ran on this Redis.
      { AUTH_FAILURES_PER_MINUTE: "4", REDIS_KEY_PREFIX: `test-${process.pid}-${randomBytes(4).toString("hex")}:` },
      async (first, second) => {
        const address = freshAddress()
        const statuses: Array<number> = []
        for (let i = 0; i < 8; i++) {
          const token = `svc_live_${randomBytes(24).toString("hex")}`
          statuses.push((await callFrom(address, i % 2 ? second : first, "GET", "/api/v1/team/members", { token })).status)
        }
        expect(statuses).toEqual([401, 401, 401, 401, 429, 429, 429, 429])
        // The budget is the address's, not the processes': another address still gets its 401s.
        expect((await callFrom(freshAddress(), second, "GET", "/api/v1/team/members", { token: "svc_live_nope" })).status).toBe(401)
      }
    ))
})
