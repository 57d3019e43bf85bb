/**
 * The transport against a real server: request ids, error shapes, body caps
 * enforced while streaming, slow and aborted uploads, malformed input — the
 * server answers 4xx with the contract's shape and keeps serving.
 */
import { connect } from "node:net"
import * as Effect from "effect/Effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../src/platform/config.js"
import { call, registerOrg } from "./support/client.js"
import { eventually } from "./support/eventually.js"
import { captureLog } from "./support/log.js"
import { metricsUrl, scrape } from "./support/metrics.js"
import { startServer, useServer } from "./support/server.js"

const server = useServer({ BODY_TIMEOUT_MS: "1500", METRICS_PORT: "0" })

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

const port = () => Number(new URL(server.url).port)

describe("transport", () => {
  it("answers health with a request id in header and body", async () => {
    const reply = await call(server.url, "GET", "/health")
    expect(reply.status).toBe(200)
    expect(reply.body.status).toBe("ok")
    expect(reply.headers.get("x-request-id")).toBe(reply.body.request_id)
    expect(reply.body.request_id).toMatch(/^req_/)
  })

  it("reports readiness of database and redis", async () => {
    const reply = await call(server.url, "GET", "/health/ready")
    expect(reply.status).toBe(200)
    expect(reply.body.checks.database.ok).toBe(true)
    expect(reply.body.checks.redis.ok).toBe(true)
  })

  it("answers unknown routes with a JSON 404", async () => {
    const reply = await call(server.url, "GET", "/api/v1/does-not-exist")
    expect(reply.status).toBe(404)
    expectErrorShape(reply.body)
  })

  it("serves the OpenAPI document and the docs page", async () => {
    const spec = await call(server.url, "GET", "/api/v1/openapi.json")
    expect(spec.status).toBe(200)
    expect(spec.body.openapi).toMatch(/^3\.1/)
    const paths = Object.keys(spec.body.paths)
    for (const path of ["/api/v1/api-keys", "/api/v1/actions", "/api/v1/ws", "/approve/{code}", "/api/v1/.well-known/jwks.json"]) {
      expect(paths).toContain(path)
    }
    const created = spec.body.paths["/api/v1/actions"].post.responses["201"].content["application/json"].schema
    expect(created.properties.request_id).toBeDefined()
    const docs = await fetch(`${server.url}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
    // Rendered at the first request (not at start), with the spec and Scalar's script inline.
    const page = await docs.text()
    expect(page).toContain("<html")
    expect(page).toContain("createApiReference")
    expect(page).toContain("/api/v1/actions")
    expect(await (await fetch(`${server.url}/docs`)).text()).toBe(page)
  })

  it("exposes Prometheus metrics per route and status on the metrics listener only", async () => {
    await call(server.url, "GET", "/health")
    const url = await metricsUrl(server)
    expect(new URL(url).port).not.toBe(new URL(server.url).port)
    const metrics = await call(url, "GET", "")
    expect(metrics.status).toBe(200)
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(metrics.text).toContain('http_requests_total{method="GET",route="/health",status="200"}')
    expect(metrics.text).toContain("http_request_duration_seconds_bucket")
    // It serves nothing else.
    expect((await call(url.replace(/\/metrics$/, ""), "GET", "/health")).status).toBe(404)
  })

  it("the public listener does not serve /metrics, with or without the admin key", async () => {
    for (const headers of [{}, { "x-admin-key": "test-admin-key" }] as Array<Record<string, string>>) {
      const reply = await call(server.url, "GET", "/metrics", { headers })
      expect(reply.status).toBe(404)
      expect(reply.text).not.toContain("http_requests_total")
    }
    const spec = await call(server.url, "GET", "/api/v1/openapi.json")
    expect(Object.keys(spec.body.paths)).not.toContain("/metrics")
  })

  it("has no metrics listener unless METRICS_PORT is set", () => {
    expect(loadConfig({}).metricsPort).toBeUndefined()
    expect(loadConfig({ METRICS_PORT: "9464" })).toMatchObject({ metricsPort: 9464, metricsHost: "127.0.0.1" })
  })
})

describe("bad input never yields a 5xx or a hang", () => {
  it("malformed JSON → 400 INVALID_JSON", async () => {
    const reply = await call(server.url, "POST", "/api/v1/auth/register", { raw: '{"email": "a@b.c", ' })
    expect(reply.status).toBe(400)
    expect(reply.body.code).toBe("INVALID_JSON")
    expectErrorShape(reply.body)
  })

  it("invalid UTF-8 → 400 INVALID_JSON", async () => {
    const reply = await call(server.url, "POST", "/api/v1/auth/register", { raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) })
    expect(reply.status).toBe(400)
    expect(reply.body.code).toBe("INVALID_JSON")
  })

  it("wrong types → 422 VALIDATION_ERROR listing every issue", async () => {
    const reply = await call(server.url, "POST", "/api/v1/auth/register", { body: { email: 42, password: ["x"], org_name: false } })
    expect(reply.status).toBe(422)
    expect(reply.body.code).toBe("VALIDATION_ERROR")
    const paths = reply.body.details.issues.map((issue: any) => issue.path).sort()
    expect(paths).toEqual(["email", "org_name", "password"])
    expectErrorShape(reply.body)
  })

  it("unknown fields are ignored", async () => {
    const reply = await call(server.url, "POST", "/api/v1/auth/login", { body: { email: "nobody@example.test", password: "whatever-long", extra: { a: 1 } } })
    expect(reply.status).toBe(401)
    expect(reply.body.code).toBe("INVALID_CREDENTIALS")
  })

  it("deeply nested JSON is refused cleanly", async () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    const reply = await call(server.url, "POST", "/api/v1/auth/login", { raw: deep })
    expect(reply.status).toBeGreaterThanOrEqual(400)
    expect(reply.status).toBeLessThan(500)
  })

  it("a 2 MiB body is refused with 413 (declared length)", async () => {
    const reply = await call(server.url, "POST", "/api/v1/auth/login", { raw: `{"email":"${"a".repeat(2 * 1024 * 1024)}"}` })
    expect(reply.status).toBe(413)
    expectErrorShape(reply.body)
  })

  it("a chunked body over the cap is refused while streaming", async () => {
    const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    const chunk = `${(256 * 1024).toString(16)}\r\n${"a".repeat(256 * 1024)}\r\n`
    const answer = await rawExchange(port(), [head, ...Array.from({ length: 12 }, () => chunk)], { waitMs: 3000 })
    expect(answer).toMatch(/^HTTP\/1\.1 413/)
  })

  it("a slow upload times out with 408 instead of hanging", async () => {
    const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    const answer = await rawExchange(port(), [head], { waitMs: 4000 })
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    expect(answer).toContain("REQUEST_TIMEOUT")
  })

  it("an aborted upload leaves the server serving", async () => {
    const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"
    await rawExchange(port(), [head, "a".repeat(100), "b"], { abortAfter: 2 })
    const reply = await call(server.url, "GET", "/health")
    expect(reply.status).toBe(200)
  })

  it("keeps serving after all of the above", async () => {
    const org = await registerOrg(server.url)
    const reply = await call(server.url, "GET", "/api/v1/api-keys", { token: org.key })
    expect(reply.status).toBe(200)
  })
})

describe("connection cap", () => {
  it("refuses requests beyond MAX_CONNECTIONS with 503 and keeps answering", async () => {
    const capped = await startServer({ MAX_CONNECTIONS: "2", BODY_TIMEOUT_MS: "5000" })
    try {
      const cappedPort = Number(new URL(capped.url).port)
      const head = "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
      // Two uploads that never finish hold both places. Once both are connected they are ahead of any later
      // connection in the server's accept queue.
      let connected = 0
      const holders = [0, 1].map(() => rawExchange(cappedPort, [head], { waitMs: 1500, onConnect: () => connected++ }))
      await eventually(() => connected === 2, { timeoutMs: 5_000, intervalMs: 5 })
      const refused = await call(capped.url, "GET", "/health")
      expect(refused.status).toBe(503)
      expect(refused.body.code).toBe("SERVER_BUSY")
      await Promise.all(holders)
      // Until the server has seen the holders go.
      await eventually(async () => expect((await call(capped.url, "GET", "/health")).status).toBe(200), { timeoutMs: 5_000, intervalMs: 20 })
    } finally {
      await capped.stop()
    }
  })
})

/** Runs `count` calls, `width` at a time. */
const inBatches = async (count: number, run: (i: number) => Promise<unknown>, width = 32) => {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, k) => run(start + k)))
  }
}
const get = (path: string, init?: RequestInit) => fetch(server.url + path, init).then((response) => response.arrayBuffer())
const metricsText = () => scrape(server)
const requestSeries = (text: string) => text.split("\n").filter((line) => line.startsWith("http_requests_total{"))
const requestCount = (text: string, method: string, route: string, status: number) => {
  const prefix = `http_requests_total{method="${method}",route="${route}",status="${status}"} `
  const line = requestSeries(text).find((l) => l.startsWith(prefix))
  return line === undefined ? 0 : Number(line.slice(prefix.length))
}

describe("metrics labels", () => {
  it("label by route template: thousands of distinct paths and parameter values add no series", async () => {
    const before = await metricsText()
    await inBatches(3000, (i) => get(`/no/such/route-${i}/${(i * 7919).toString(36)}`))
    await inBatches(1000, (i) => get(`/api/v1/verify/abc${i}`))
    await inBatches(300, (i) => get(`/api/v1/actions/not-an-id-${i}`))
    await inBatches(300, (i) => get(`/approve/code${i}`))
    const after = await metricsText()
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

  it("transport-answered errors share the unmatched label", async () => {
    const before = await metricsText()
    const reply = await call(server.url, "POST", "/api/v1/auth/login", { raw: `{"email":"${"a".repeat(2 * 1024 * 1024)}"}` })
    expect(reply.status).toBe(413)
    expect(requestCount(await metricsText(), "POST", "unmatched", 413) - requestCount(before, "POST", "unmatched", 413)).toBe(1)
  })

  it("the request log line names the route template, not the path", async () => {
    const { result, lines } = await captureLog(() => call(server.url, "GET", "/api/v1/verify/secret-looking-value"))
    const line = lines.find((l) => l.msg === "request" && l.request_id === result.headers.get("x-request-id"))
    expect(line).toMatchObject({ level: "info", method: "GET", route: "/api/v1/verify/:receipt_uuid", status: 404 })
    expect(JSON.stringify(lines)).not.toContain("secret-looking-value")
  })
})

describe("failures are logged", () => {
  it("a 500 writes one error line with the request id, route template and cause, and nothing of the request", async () => {
    const org = await registerOrg(server.url)
    const sql = (statement: string) => server.run(Effect.flatMap(Effect.service(SqlClient.SqlClient), (client) => client.unsafe(statement)))
    // A real defect: the store's table is gone, so the query dies inside the handler.
    await sql("ALTER TABLE endpoint_whitelist RENAME TO endpoint_whitelist_moved")
    try {
      const { result, lines } = await captureLog(() =>
        call(server.url, "GET", "/api/v1/endpoint-whitelist?note=query-secret", { token: org.token, headers: { "x-extra": "header-secret" } })
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
    } finally {
      await sql("ALTER TABLE endpoint_whitelist_moved RENAME TO endpoint_whitelist")
    }
    expect((await call(server.url, "GET", "/api/v1/endpoint-whitelist", { token: org.token })).status).toBe(200)
  })
})

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

describe("slow bodies are 408 before uWS drops the connection", () => {
  it("a body that stops arriving, or trickles, is 408 after BODY_IDLE_TIMEOUT_MS and the connection is closed", async () => {
    const short = await startServer({ BODY_TIMEOUT_MS: "20000", BODY_IDLE_TIMEOUT_MS: "800" })
    try {
      const target = Number(new URL(short.url).port)
      const [silent, trickling] = await Promise.all([slowBody(target, { waitMs: 3000 }), slowBody(target, { everyMs: 100, waitMs: 3000 })])
      expect408(silent, 2000)
      expect408(trickling, 2000)
      expect(silent.closedAfterMs!).toBeGreaterThan(700)
      // A body that keeps progressing (160 KB per window) is not cut, though it takes longer than the window.
      const chunk = "a".repeat(200 * 1024)
      const head = `POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${5 * chunk.length + 2}\r\n\r\n"`
      const steady = await rawExchange(target, [head, chunk, chunk, chunk, chunk, `${chunk}"`], { gapMs: 400, waitMs: 1000 })
      expect(steady).toMatch(/^HTTP\/1\.1 4(00|01|22)/)
    } finally {
      await short.stop()
    }
  })

  it("with the default settings a silent and a trickling body get 408 before uWS's own cut-off (8–12 s)", async () => {
    const defaults = await startServer({ BODY_TIMEOUT_MS: undefined, BODY_IDLE_TIMEOUT_MS: undefined })
    try {
      const target = Number(new URL(defaults.url).port)
      const [silent, trickling] = await Promise.all([slowBody(target, { waitMs: 14_000 }), slowBody(target, { everyMs: 1000, waitMs: 14_000 })])
      expect408(silent, 8000)
      expect408(trickling, 8000)
    } finally {
      await defaults.stop()
    }
  }, 30_000)
})
