/**
 * The transport against a real server: request ids, error shapes, body caps
 * enforced while streaming, slow and aborted uploads, malformed input — the
 * server answers 4xx with the contract's shape and keeps serving. Routes of the
 * contract go through the typed client (HttpApiClient over GatewayApi); most of
 * this file is about raw transport and stays raw on purpose.
 */
import { connect } from "node:net"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { loadConfig } from "../src/platform/config.js"
import { answer, client, clientAt, raw, register } from "./support/api.js"
import { call } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { eventually, eventuallyEffect } from "./support/eventually.js"
import { captureLog } from "./support/log.js"
import { metricsUrl, scrape } from "./support/metrics.js"
import { Gateway, type ServerEnv, startServer } from "./support/server.js"

const Setup = Gateway.layer({ BODY_TIMEOUT_MS: "1500", METRICS_PORT: "0" })


/** A server of the test's own, stopped when the test's scope closes. */
const node = (env: ServerEnv) =>
  Effect.acquireRelease(
    Effect.promise(() => startServer(env)),
    (started) => Effect.promise(() => started.stop())
  )

const expectErrorShape = (body: any) => {
  expect(typeof body.code).toBe("string")
  expect(typeof body.message).toBe("string")
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/)
}

/** Sends raw bytes over one TCP connection and returns what comes back until close or timeout. */
const rawExchange = (
  port: number,
  chunks: Array<string | Buffer>,
  options: { gapMs?: number; waitMs?: number; abortAfter?: number; onConnect?: () => void } = {}
) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    let received = ""
    let timer: NodeJS.Timeout | undefined
    const finish = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve(received)
    }
    socket.on("data", (data) => {
      received += data.toString("latin1")
    })
    socket.on("close", finish)
    socket.on("error", finish)
    socket.on("connect", async () => {
      options.onConnect?.()
      for (let i = 0; i < chunks.length; i++) {
        if (options.abortAfter !== undefined && i === options.abortAfter) return finish()
        socket.write(chunks[i]!)
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs))
      }
      timer = setTimeout(finish, options.waitMs ?? 3000)
    })
  })

const port = Effect.map(Gateway, (server) => Number(new URL(server.url).port))

/** Runs `count` calls, `width` at a time. */
const inBatches = async (count: number, run: (i: number) => Promise<unknown>, width = 32) => {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, k) => run(start + k)))
  }
}
const requestSeries = (text: string) => text.split("\n").filter((line) => line.startsWith("http_requests_total{"))
const requestCount = (text: string, method: string, route: string, status: number) => {
  const prefix = `http_requests_total{method="${method}",route="${route}",status="${status}"} `
  const line = requestSeries(text).find((l) => l.startsWith(prefix))
  return line === undefined ? 0 : Number(line.slice(prefix.length))
}
const metricsText = Effect.flatMap(Gateway, (server) => Effect.promise(() => scrape(server)))

/** Sends a body's head and first byte, then `trickle` one byte every `everyMs` (or nothing); reports the answer and when the server closed. */
const slowBody = (target: number, options: { everyMs?: number; waitMs: number }) =>
  new Promise<{ answer: string; closedAfterMs: number | undefined }>((resolve) => {
    const started = performance.now()
    const socket = connect(target, "127.0.0.1")
    let answer = ""
    let closedAfterMs: number | undefined
    let trickle: NodeJS.Timeout | undefined
    const done = () => {
      clearInterval(trickle)
      clearTimeout(giveUp)
      socket.destroy()
      resolve({ answer, closedAfterMs })
    }
    const giveUp = setTimeout(done, options.waitMs)
    socket.on("data", (data) => {
      answer += data.toString("latin1")
    })
    socket.on("close", () => {
      closedAfterMs = performance.now() - started
      done()
    })
    socket.on("error", done)
    socket.write("POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    if (options.everyMs) trickle = setInterval(() => socket.write("a"), options.everyMs)
  })

const expect408 = (result: { answer: string; closedAfterMs: number | undefined }, withinMs: number) => {
  expect(result.answer).toMatch(/^HTTP\/1\.1 408/)
  const body = JSON.parse(result.answer.slice(result.answer.indexOf("\r\n\r\n") + 4))
  expect(body).toMatchObject({ code: "REQUEST_TIMEOUT", error: expect.any(String), message: expect.any(String) })
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/)
  expect(result.closedAfterMs).toBeDefined()
  expect(result.closedAfterMs!).toBeLessThan(withinMs)
}

liveLayer(Setup)((it) => {
  it.describe("transport", () => {
    it.effect("answers health with a request id in header and body", () =>
      Effect.gen(function* () {
        const [health, reply] = yield* (yield* client()).system.health({ responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(health.status).toBe("ok")
        // request_id is outside the contract's schema: read it from the body as sent.
        const sent = (yield* reply.json) as { request_id: string }
        expect(reply.headers["x-request-id"]).toBe(sent.request_id)
        expect(sent.request_id).toMatch(/^req_/)
      })
    )

    it.effect("reports readiness of database and redis", () =>
      Effect.gen(function* () {
        const [ready, reply] = yield* (yield* client()).system.ready({ responseMode: "decoded-and-response" })
        expect(reply.status).toBe(200)
        expect(ready.checks.database.ok).toBe(true)
        expect(ready.checks.redis.ok).toBe(true)
      })
    )

    it.effect("answers unknown routes with a JSON 404", () =>
      Effect.gen(function* () {
        // Raw: a route the contract does not have.
        const reply = yield* raw("GET", "/api/v1/does-not-exist")
        expect(reply.status).toBe(404)
        expectErrorShape(reply.body)
      })
    )

    it.effect("serves the OpenAPI document and the docs page", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        // Raw: the OpenAPI document and the docs page are not endpoints of the contract.
        const spec = yield* raw("GET", "/api/v1/openapi.json")
        expect(spec.status).toBe(200)
        expect(spec.body.openapi).toMatch(/^3\.1/)
        const paths = Object.keys(spec.body.paths)
        for (const path of ["/api/v1/api-keys", "/api/v1/actions", "/api/v1/ws", "/approve/{code}", "/api/v1/.well-known/jwks.json"]) {
          expect(paths).toContain(path)
        }
        const created = spec.body.paths["/api/v1/actions"].post.responses["201"].content["application/json"].schema
        expect(created.properties.request_id).toBeDefined()
        const docs = yield* Effect.promise(() => fetch(`${server.url}/docs`))
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
        // Rendered at the first request (not at start), with the spec and Scalar's script inline.
        const page = yield* Effect.promise(() => docs.text())
        expect(page).toContain("<html")
        expect(page).toContain("createApiReference")
        expect(page).toContain("/api/v1/actions")
        expect(yield* Effect.promise(async () => (await fetch(`${server.url}/docs`)).text())).toBe(page)
      })
    )

    it.effect("exposes Prometheus metrics per route and status on the metrics listener only", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        yield* (yield* client()).system.health({})
        const url = yield* Effect.promise(() => metricsUrl(server))
        expect(new URL(url).port).not.toBe(new URL(server.url).port)
        // Raw: the metrics listener is outside the API and answers Prometheus text.
        const metrics = yield* Effect.promise(() => call(url, "GET", ""))
        expect(metrics.status).toBe(200)
        expect(metrics.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
        expect(metrics.text).toContain('http_requests_total{method="GET",route="/health",status="200"}')
        expect(metrics.text).toContain("http_request_duration_seconds_bucket")
        // It serves nothing else.
        expect((yield* (yield* clientAt(url.replace(/\/metrics$/, ""))).system.health({ responseMode: "response-only" })).status).toBe(404)
      })
    )

    it.effect("the public listener does not serve /metrics, with or without the admin key", () =>
      Effect.gen(function* () {
        for (const headers of [{}, { "x-admin-key": "test-admin-key" }] as Array<Record<string, string>>) {
          // Raw: /metrics is not a route of the contract, and the answer is checked as text.
          const reply = yield* raw("GET", "/metrics", { headers })
          expect(reply.status).toBe(404)
          expect(reply.text).not.toContain("http_requests_total")
        }
        // Raw: the OpenAPI document is not an endpoint of the contract.
        const spec = yield* raw("GET", "/api/v1/openapi.json")
        expect(Object.keys(spec.body.paths)).not.toContain("/metrics")
      })
    )

    it.effect("has no metrics listener unless METRICS_PORT is set", () =>
      Effect.sync(() => {
        expect(loadConfig({}).metricsPort).toBeUndefined()
        expect(loadConfig({ METRICS_PORT: "9464" })).toMatchObject({ metricsPort: 9464, metricsHost: "127.0.0.1" })
      })
    )
  })

  it.describe("bad input never yields a 5xx or a hang", () => {
    it.effect("malformed JSON → 400 INVALID_JSON", () =>
      Effect.gen(function* () {
        // Raw: a body that is not JSON.
        const reply = yield* raw("POST", "/api/v1/auth/register", { raw: '{"email": "a@b.c", ' })
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("INVALID_JSON")
        expectErrorShape(reply.body)
      })
    )

    it.effect("invalid UTF-8 → 400 INVALID_JSON", () =>
      Effect.gen(function* () {
        // Raw: bytes that are not UTF-8.
        const reply = yield* raw("POST", "/api/v1/auth/register", { raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) })
        expect(reply.status).toBe(400)
        expect(reply.body.code).toBe("INVALID_JSON")
      })
    )

    it.effect("wrong types → 422 VALIDATION_ERROR listing every issue", () =>
      Effect.gen(function* () {
        // Raw: a body that violates the schema on purpose, which the typed client refuses to encode.
        const reply = yield* raw("POST", "/api/v1/auth/register", { body: { email: 42, password: ["x"], org_name: false } })
        expect(reply.status).toBe(422)
        expect(reply.body.code).toBe("VALIDATION_ERROR")
        const paths = reply.body.details.issues.map((issue: any) => issue.path).sort()
        expect(paths).toEqual(["email", "org_name", "password"])
        expectErrorShape(reply.body)
      })
    )

    it.effect("unknown fields are ignored", () =>
      Effect.gen(function* () {
        // Raw: a field outside the contract, which the typed client would not send.
        const reply = yield* raw("POST", "/api/v1/auth/login", { body: { email: "nobody@example.test", password: "whatever-long", extra: { a: 1 } } })
        expect(reply.status).toBe(401)
        expect(reply.body.code).toBe("INVALID_CREDENTIALS")
      })
    )

    it.effect("deeply nested JSON is refused cleanly", () =>
      Effect.gen(function* () {
        const deep = "[".repeat(100_000) + "]".repeat(100_000)
        // Raw: a body that is not the contract's object.
        const reply = yield* raw("POST", "/api/v1/auth/login", { raw: deep })
        expect(reply.status).toBeGreaterThanOrEqual(400)
        expect(reply.status).toBeLessThan(500)
      })
    )

    it.effect("a 2 MiB body is refused with 413 (declared length)", () =>
      Effect.gen(function* () {
        // Raw: an oversized body with only one field, outside the contract.
        const reply = yield* raw("POST", "/api/v1/auth/login", { raw: `{"email":"${"a".repeat(2 * 1024 * 1024)}"}` })
        expect(reply.status).toBe(413)
        expectErrorShape(reply.body)
      })
    )

    it.effect("a chunked body over the cap is refused while streaming", () =>
      Effect.gen(function* () {
        const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        const chunk = `${(256 * 1024).toString(16)}\r\n${"a".repeat(256 * 1024)}\r\n`
        const target = yield* port
        const received = yield* Effect.promise(() => rawExchange(target, [head, ...Array.from({ length: 12 }, () => chunk)], { waitMs: 3000 }))
        expect(received).toMatch(/^HTTP\/1\.1 413/)
      })
    )

    it.effect("a slow upload times out with 408 instead of hanging", () =>
      Effect.gen(function* () {
        const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        const target = yield* port
        const received = yield* Effect.promise(() => rawExchange(target, [head], { waitMs: 4000 }))
        expect(received).toMatch(/^HTTP\/1\.1 408/)
        expect(received).toContain("REQUEST_TIMEOUT")
      })
    )

    it.effect("an aborted upload leaves the server serving", () =>
      Effect.gen(function* () {
        const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"
        const target = yield* port
        yield* Effect.promise(() => rawExchange(target, [head, "a".repeat(100), "b"], { abortAfter: 2 }))
        const reply = yield* (yield* client()).system.health({ responseMode: "response-only" })
        expect(reply.status).toBe(200)
      })
    )

    it.effect("keeps serving after all of the above", () =>
      Effect.gen(function* () {
        const org = yield* register()
        const reply = yield* (yield* client(org.key)).apiKeys.list({ query: {}, responseMode: "response-only" })
        expect(reply.status).toBe(200)
      })
    )
  })

  it.describe("connection cap", () => {
    it.effect("refuses requests beyond MAX_CONNECTIONS with 503 and keeps answering", () =>
      Effect.gen(function* () {
        const capped = yield* node({ MAX_CONNECTIONS: "2", BODY_TIMEOUT_MS: "5000" })
        const cappedPort = Number(new URL(capped.url).port)
        const api = yield* clientAt(capped.url)
        const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        // Two uploads that never finish hold both places. Once both are connected they are ahead of any later
        // connection in the server's accept queue.
        let connected = 0
        const holders = [0, 1].map(() => rawExchange(cappedPort, [head], { waitMs: 1500, onConnect: () => connected++ }))
        yield* Effect.promise(() => eventually(() => connected === 2, { timeoutMs: 5_000, intervalMs: 5 }))
        const refused = yield* answer(api.system.health({ responseMode: "response-only" }))
        expect(refused.status).toBe(503)
        expect(refused.body.code).toBe("SERVER_BUSY")
        yield* Effect.promise(() => Promise.all(holders))
        // Until the server has seen the holders go.
        yield* eventuallyEffect(
          Effect.map(api.system.health({ responseMode: "response-only" }), (reply) => expect(reply.status).toBe(200)),
          { timeoutMs: 5_000, intervalMs: 20 }
        )
      })
    )
  })

  it.describe("metrics labels", () => {
    it.effect("label by route template: thousands of distinct paths and parameter values add no series", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        // Raw fetches: unmatched paths and parameter values the contract's routes would refuse to encode or decode.
        const get = (path: string) => fetch(server.url + path).then((response) => response.arrayBuffer())
        const before = yield* metricsText
        yield* Effect.promise(async () => {
          await inBatches(3000, (i) => get(`/no/such/route-${i}/${(i * 7919).toString(36)}`))
          await inBatches(1000, (i) => get(`/api/v1/verify/abc${i}`))
          await inBatches(300, (i) => get(`/api/v1/actions/not-an-id-${i}`))
          await inBatches(300, (i) => get(`/approve/code${i}`))
        })
        const after = yield* metricsText
        // At most one new series per (method, template, status) these requests could reach, however many paths were sent.
        expect(requestSeries(after).length - requestSeries(before).length).toBeLessThanOrEqual(6)
        expect(after.length).toBeLessThan(before.length + 20_000)
        const delta = (method: string, route: string, status: number) => requestCount(after, method, route, status) - requestCount(before, method, route, status)
        expect(delta("GET", "unmatched", 404)).toBe(3000)
        expect(delta("GET", "/api/v1/verify/:receipt_uuid", 404)).toBe(1000)
        expect(delta("GET", "/api/v1/actions/:action_uuid", 401)).toBe(300)
        expect(delta("GET", "/approve/:code", 404)).toBe(300)
        expect(after).not.toContain("abc999")
        expect(after).not.toContain("not-an-id")
      })
    )

    it.effect("transport-answered errors share the unmatched label", () =>
      Effect.gen(function* () {
        const before = yield* metricsText
        // Raw: an oversized body with only one field, outside the contract.
        const reply = yield* raw("POST", "/api/v1/auth/login", { raw: `{"email":"${"a".repeat(2 * 1024 * 1024)}"}` })
        expect(reply.status).toBe(413)
        expect(requestCount(yield* metricsText, "POST", "unmatched", 413) - requestCount(before, "POST", "unmatched", 413)).toBe(1)
      })
    )

    it.effect("the request log line names the route template, not the path", () =>
      Effect.gen(function* () {
        const api = yield* client()
        const { result, lines } = yield* Effect.promise(() =>
          captureLog(() => Effect.runPromise(api.receiptsPublic.verifyReceipt({ params: { receipt_uuid: "secret-looking-value" }, responseMode: "response-only" })))
        )
        const line = lines.find((l) => l.msg === "request" && l.request_id === result.headers["x-request-id"])
        expect(line).toMatchObject({ level: "info", method: "GET", route: "/api/v1/verify/:receipt_uuid", status: 404 })
        expect(JSON.stringify(lines)).not.toContain("secret-looking-value")
      })
    )
  })

  it.describe("failures are logged", () => {
    it.effect("a 500 writes one error line with the request id, route template and cause, and nothing of the request", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const org = yield* register()
        const sql = (statement: string) => Effect.promise(() => server.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (db) => db.unsafe(statement))))
        // A real defect: the store's table is gone, so the query dies inside the handler.
        yield* sql("ALTER TABLE endpoint_whitelist RENAME TO endpoint_whitelist_moved")
        yield* Effect.gen(function* () {
          // Raw: a query parameter and a header outside the contract, which must not reach the log.
          const { result, lines } = yield* Effect.promise(() =>
            captureLog(() => call(server.url, "GET", "/api/v1/endpoint-whitelist?note=query-secret", { token: org.token, headers: { "x-extra": "header-secret" } }))
          )
          expect(result.status).toBe(500)
          expect(result.body.code).toBe("INTERNAL_ERROR")
          const requestId = result.headers.get("x-request-id")
          expect(result.body.request_id).toBe(requestId)
          const errors = lines.filter((line) => line.level === "error" && line.request_id === requestId)
          expect(errors).toHaveLength(1)
          expect(errors[0]).toMatchObject({ msg: "request", method: "GET", route: "/api/v1/endpoint-whitelist", status: 500 })
          expect(errors[0]!.cause).toMatch(/endpoint_whitelist/)
          expect(errors[0]!.cause).toMatch(/\n\s+at /)
          const logged = JSON.stringify(lines)
          for (const secret of [org.token, "header-secret", "query-secret"]) expect(logged).not.toContain(secret)
        }).pipe(Effect.ensuring(sql("ALTER TABLE endpoint_whitelist_moved RENAME TO endpoint_whitelist")))
        expect((yield* (yield* client(org.token)).whitelist.list({ responseMode: "response-only" })).status).toBe(200)
      })
    )
  })

  it.describe("slow bodies are 408 before uWS drops the connection", () => {
    it.effect("a body that stops arriving, or trickles, is 408 after BODY_IDLE_TIMEOUT_MS and the connection is closed", () =>
      Effect.gen(function* () {
        const short = yield* node({ BODY_TIMEOUT_MS: "20000", BODY_IDLE_TIMEOUT_MS: "800" })
        const target = Number(new URL(short.url).port)
        const [silent, trickling] = yield* Effect.promise(() =>
          Promise.all([slowBody(target, { waitMs: 3000 }), slowBody(target, { everyMs: 100, waitMs: 3000 })])
        )
        expect408(silent, 2000)
        expect408(trickling, 2000)
        expect(silent.closedAfterMs!).toBeGreaterThan(700)
        // A body that keeps progressing (160 KB per window) is not cut, though it takes longer than the window.
        const chunk = "a".repeat(200 * 1024)
        const head = `POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${5 * chunk.length + 2}\r\n\r\n"`
        const steady = yield* Effect.promise(() => rawExchange(target, [head, chunk, chunk, chunk, chunk, `${chunk}"`], { gapMs: 400, waitMs: 1000 }))
        expect(steady).toMatch(/^HTTP\/1\.1 4(00|01|22)/)
      })
    )

    it.effect(
      "with the default settings a silent and a trickling body get 408 before uWS's own cut-off (8–12 s)",
      () =>
        Effect.gen(function* () {
          const defaults = yield* node({ BODY_TIMEOUT_MS: undefined, BODY_IDLE_TIMEOUT_MS: undefined })
          const target = Number(new URL(defaults.url).port)
          const [silent, trickling] = yield* Effect.promise(() =>
            Promise.all([slowBody(target, { waitMs: 14_000 }), slowBody(target, { everyMs: 1000, waitMs: 14_000 })])
          )
          expect408(silent, 8000)
          expect408(trickling, 8000)
        }),
      30_000
    )
  })
})
