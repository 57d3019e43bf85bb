/**
 * The edges of `GET /api/v1/ws`: an oversized frame is answered (INVALID_FRAME, then close 1009
 * with a reason) instead of a dropped connection; `case:<id>` subscribes only to a case of the
 * caller's organization (NOT_FOUND otherwise), each lookup counted against the credential's rate
 * limit; a socket holds at most 100 channels; refused
 * credentials count against the address's budget of failures, shared with HTTP (then close 4429).
 */
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import WebSocket from "ws"
import { MAX_FRAME_BYTES, MAX_SUBSCRIPTIONS } from "../protocol/frames.js"
import { callFrom, freshAddress } from "./support/address.js"
import { insertCases } from "./support/cases.js"
import { registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"
import { Client, connected, subscribed, useSockets } from "./support/socket-client.js"

const BUDGET = 4
const server = useServer({ AUTH_FAILURES_PER_MINUTE: String(BUDGET) })
const wsUrl = () => `${server.url.replace(/^http/, "ws")}/api/v1/ws`
const org = useFixture(() => registerOrg(server.url, "Sockets"))
const other = useFixture(() => registerOrg(server.url, "Other"))
const track = useSockets()

/** The next error frame after those already received. */
const nextError = (client: Client) => {
  const seen = client.frames.filter((frame) => frame.type === "error").length
  return client.next((frame) => frame.type === "error" && client.frames.filter((f) => f.type === "error").indexOf(frame) >= seen)
}

/** Close code and reason of a socket, as the peer sent them. */
const closing = (client: Client) =>
  new Promise<{ code: number; reason: string }>((resolve) => client.socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })))

describe("oversized frames", () => {
  for (const size of [MAX_FRAME_BYTES + 1, 64 * 1024, 512 * 1024]) {
    it(`a ${size}-byte frame gets INVALID_FRAME, then close 1009 with a reason`, async () => {
      const client = track(await connected(wsUrl(), org.key))
      const closed = closing(client)
      client.send(JSON.stringify({ type: "ping", pad: "x".repeat(size) }))
      const { code, reason } = await closed
      expect(code).toBe(1009)
      expect(reason).toMatch(/frame larger than 16384 bytes/)
      expect(client.frames.find((frame) => frame.type === "error")).toMatchObject({ code: "INVALID_FRAME" })
    })
  }

  it("a frame at the limit is read as usual", async () => {
    const client = track(await connected(wsUrl(), org.key))
    const frame = JSON.stringify({ type: "ping", pad: "" })
    client.send(JSON.stringify({ type: "ping", pad: "x".repeat(MAX_FRAME_BYTES - frame.length) }))
    await client.next((f) => f.type === "pong")
    expect(client.closeCode).toBeUndefined()
  })
})

describe("case channels", () => {
  it("subscribe to a case of the organization; another organization's case or a random id is NOT_FOUND", async () => {
    const [own] = await insertCases(server.run, org.orgUuid)
    const [foreign] = await insertCases(server.run, other.orgUuid)
    const client = track(await connected(wsUrl(), org.key))
    await subscribed(client, `case:${own}`)
    for (const channel of [`case:${foreign}`, `case:cas_${randomBytes(8).toString("hex")}`]) {
      client.send({ type: "subscribe", channel })
      const error = await nextError(client)
      expect(error).toMatchObject({ type: "error", code: "NOT_FOUND", channel })
      expect(error.message).toMatch(/not found/)
    }
    expect(client.frames.filter((frame) => frame.type === "subscribed").map((frame) => frame.channel)).toEqual([`case:${own}`])
    // The socket stays open and in order.
    client.send({ type: "ping" })
    await client.next((frame) => frame.type === "pong")
  })
})

describe("subscriptions per socket", () => {
  it(`holds at most ${MAX_SUBSCRIPTIONS} channels: then TOO_MANY_SUBSCRIPTIONS, until one is given up`, async () => {
    const cases = await insertCases(server.run, org.orgUuid, MAX_SUBSCRIPTIONS)
    const client = track(await connected(wsUrl(), org.key))
    for (const id of cases.slice(0, MAX_SUBSCRIPTIONS - 2)) client.send({ type: "subscribe", channel: `case:${id}` })
    client.send({ type: "subscribe", channel: "actions" })
    client.send({ type: "subscribe", channel: "notifications" })
    await client.next(() => client.frames.filter((frame) => frame.type === "subscribed").length === MAX_SUBSCRIPTIONS, 10_000)
    // Again to a held one: still subscribed, and it does not count twice.
    await subscribed(client, "actions")
    const extra = `case:${cases.at(-1)}`
    client.send({ type: "subscribe", channel: extra })
    expect(await nextError(client)).toMatchObject({ code: "TOO_MANY_SUBSCRIPTIONS", channel: extra })
    client.send({ type: "unsubscribe", channel: "actions" })
    await subscribed(client, extra)
    expect(client.closeCode).toBeUndefined()
  })
})

describe("failed socket authentications", () => {
  const connectFrom = (address: string, token?: string) =>
    track(new Client(new WebSocket(wsUrl(), { localAddress: address, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) })))

  it("count against the address with HTTP's: past the budget a RATE_LIMIT_EXCEEDED frame with retry_after, then close 4429", async () => {
    const address = freshAddress()
    // Two refusals over HTTP, two on sockets (an upgrade header, an auth frame): the budget is spent.
    for (let i = 0; i < 2; i++) expect((await callFrom(address, server.url, "GET", "/api/v1/team/members", { token: "svc_live_nope" })).status).toBe(401)
    const byHeader = connectFrom(address, "svc_live_not_a_key")
    expect(await byHeader.closed).toBe(4401)
    const byFrame = connectFrom(address)
    await byFrame.opened
    byFrame.send({ type: "auth", token: "not-a-jwt" })
    expect(await byFrame.closed).toBe(4401)
    const throttled = connectFrom(address)
    await throttled.opened
    throttled.send({ type: "auth", token: "not-a-jwt-either" })
    expect(await throttled.closed).toBe(4429)
    const error = throttled.frames.find((frame) => frame.type === "error")
    expect(error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED" })
    expect(error.retry_after).toBeGreaterThanOrEqual(1)
    // HTTP from the address is refused as well, and another address is not.
    expect((await callFrom(address, server.url, "GET", "/api/v1/team/members", { token: "svc_live_nope" })).status).toBe(429)
    const elsewhere = connectFrom(freshAddress(), org.key)
    await elsewhere.opened
    await subscribed(elsewhere, "notifications")
  })
})

describe("case lookups and the credential's rate limit", () => {
  const limited = useServer({ RATE_LIMIT_PER_MINUTE: "3", PUBLIC_RATE_LIMIT_PER_MINUTE: "1000" })
  const owner = useFixture(() => registerOrg(limited.url, "Limited"))

  it("each case lookup counts as a request of the key: past its limit RATE_LIMIT_EXCEEDED with retry_after, the socket stays", async () => {
    const cases = await insertCases(limited.run, owner.orgUuid, 4)
    const client = track(await connected(`${limited.url.replace(/^http/, "ws")}/api/v1/ws`, owner.key))
    for (const id of cases.slice(0, 3)) await subscribed(client, `case:${id}`)
    const channel = `case:${cases[3]}`
    client.send({ type: "subscribe", channel })
    const error = await nextError(client)
    expect(error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", channel })
    expect(error.retry_after).toBeGreaterThanOrEqual(1)
    // Channels that need no lookup are not counted.
    await subscribed(client, "notifications")
  })
})
