/**
 * SelfCalls (a caller's own request to our routes, for chat and MCP tools): a public route counts
 * its per-address limit against the caller's address, not against loopback, and only a request
 * that proves it comes from this process's SelfCalls may name that address.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { callerAddress, SELF_CALL_CLIENT_HEADER, SELF_CALL_HEADER, SelfCalls } from "../src/platform/self-calls.js"
import { call, registerOrg } from "./support/client.js"
import { useServer } from "./support/server.js"

describe("SelfCalls", () => {
  const server = useServer({ PUBLIC_RATE_LIMIT_PER_MINUTE: "2" })

  it("counts a public route's limit per caller address", async () => {
    const org = await registerOrg(server.url)
    const jwks = (clientIp: string) =>
      server.run(Effect.flatMap(SelfCalls, (calls) => calls.call({ method: "GET", path: "/api/v1/.well-known/jwks.json", caller: { credential: org.key, clientIp } })))
    expect((await jwks("198.51.100.1")).status).toBe(200)
    expect((await jwks("198.51.100.1")).status).toBe(200)
    expect((await jwks("198.51.100.1")).status).toBe(429)
    // Another caller has a budget of its own, and so has loopback.
    expect((await jwks("198.51.100.2")).status).toBe(200)
    expect((await call(server.url, "GET", "/api/v1/.well-known/jwks.json")).status).toBe(200)
  })

  it("lets nobody else name a client address", async () => {
    // Each try names a fresh address: honoured, none would ever be limited; ignored, loopback's two per minute run out.
    const statuses: Array<number> = []
    for (let i = 1; i <= 3; i++) {
      const forged = { [SELF_CALL_HEADER]: "guess", [SELF_CALL_CLIENT_HEADER]: `203.0.113.${i}` }
      statuses.push((await call(server.url, "GET", "/api/v1/.well-known/jwks.json", { headers: forged })).status)
    }
    expect(statuses).toContain(429)
    const forged = { [SELF_CALL_HEADER]: "guess", [SELF_CALL_CLIENT_HEADER]: "203.0.113.9" }
    expect(callerAddress("127.0.0.1", forged)).toBe("127.0.0.1")
    expect(callerAddress("192.0.2.7", { [SELF_CALL_CLIENT_HEADER]: "203.0.113.9" })).toBe("192.0.2.7")
  })
})
