import { createHmac } from "node:crypto"
import fc from "fast-check"
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import {
  deliveryBody,
  judgeAttempt,
  MAX_ATTEMPTS,
  parseRetryAfter,
  RETRY_DELAYS_MS,
  retryDelay
} from "../src/webhooks/schedule.js"
import { newWebhookSecret, signedHeaders } from "../src/webhooks/signing.js"

describe("webhook signatures", () => {
  it("verify with the standardwebhooks package and with a plain HMAC", () => {
    const secret = newWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(Buffer.from(secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24)
    const body = JSON.stringify(deliveryBody("action.approved", "msg_1", "2026-01-01T00:00:00.000Z", { action_uuid: "a" }))
    const headers = signedHeaders(secret, "msg_1", Math.floor(Date.now() / 1000), body)
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ event: "action.approved", delivery_id: "msg_1" })
    expect(headers["x-signature"]).toBe(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`)
    // The published SDK verifies X-Aira-Signature: the same value.
    expect(headers["x-aira-signature"]).toBe(headers["x-signature"])
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow()
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow()
  })

  it("puts the data both nested and at the top level, envelope fields winning", () => {
    const body = deliveryBody("case.complete", "msg_2", "t", { case_id: "c1", event: "spoofed" })
    expect(body).toEqual({ case_id: "c1", event: "case.complete", delivery_id: "msg_2", timestamp: "t", data: { case_id: "c1", event: "spoofed" } })
  })
})

describe("retry schedule", () => {
  it("waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up", () => {
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000])
    expect(MAX_ATTEMPTS).toBe(8)
    expect(retryDelay(1, 0.5)).toBe(5000)
    expect(retryDelay(8, 0.5)).toBeUndefined()
  })

  it("jitter stays within ±10 %", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, random) => {
        const base = RETRY_DELAYS_MS[attempt - 1]!
        const delay = retryDelay(attempt, random)!
        return delay >= Math.floor(base * 0.9) && delay <= Math.ceil(base * 1.1)
      })
    )
  })

  it("judges answers: 2xx delivered, 410 gone, 3xx/4xx/5xx/timeouts retried, last attempt failed", () => {
    const base = { attempt: 1, retryAfter: undefined, now: 1_000_000, random: 0.5 }
    expect(judgeAttempt({ ...base, status: 204 })).toEqual({ kind: "delivered" })
    expect(judgeAttempt({ ...base, status: 410 })).toEqual({ kind: "gone" })
    for (const status of [301, 400, 500, undefined]) expect(judgeAttempt({ ...base, status })).toEqual({ kind: "retry", at: 1_005_000 })
    expect(judgeAttempt({ ...base, attempt: 8, status: 500 })).toEqual({ kind: "failed" })
  })

  it("honours Retry-After when it asks for longer", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    expect(parseRetryAfter("120", now)).toBe(120_000)
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now)).toBe(60_000)
    expect(parseRetryAfter("soon", now)).toBeUndefined()
    expect(judgeAttempt({ attempt: 1, status: 429, retryAfter: "120", now, random: 0.5 })).toEqual({ kind: "retry", at: now + 120_000 })
    expect(judgeAttempt({ attempt: 1, status: 503, retryAfter: "1", now, random: 0.5 })).toEqual({ kind: "retry", at: now + 5_000 })
  })
})
