/**
 * The transport against a real server: request ids, error shapes, body caps
 * enforced while streaming, slow and aborted uploads, malformed input — the
 * server answers 4xx with the contract's shape and keeps serving.
 */
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { startServer, type TestServer } from "./support/server.js"

let server: TestServer

beforeAll(async () => {
  server = await startServer({ BODY_TIMEOUT_MS: "1500" })
})
afterAll(async () => {
  await server?.stop()
})

const expectErrorShape = (body: any) => {
  expect(typeof body.code).toBe("string")
  expect(typeof body.message).toBe("string")
  expect(body.request_id).toMatch(/^req_[0-9a-f]{32}$/)
}

/** Sends raw bytes over one TCP connection and returns what comes back until close or timeout. */
const rawExchange = (port: number, chunks: Array<string | Buffer>, options: { gapMs?: number; waitMs?: number; abortAfter?: number } = {}) =>
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
    expect(await docs.text()).toContain("<html")
  })

  it("exposes Prometheus metrics per route and status", async () => {
    await call(server.url, "GET", "/health")
    const metrics = await call(server.url, "GET", "/metrics")
    expect(metrics.status).toBe(200)
    expect(metrics.text).toContain('http_requests_total{method="GET",route="/health",status="200"}')
    expect(metrics.text).toContain("http_request_duration_seconds_bucket")
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
      // Two uploads that never finish hold both places.
      const holders = [rawExchange(cappedPort, [head], { waitMs: 1500 }), rawExchange(cappedPort, [head], { waitMs: 1500 })]
      await new Promise((r) => setTimeout(r, 300))
      const refused = await call(capped.url, "GET", "/health")
      expect(refused.status).toBe(503)
      expect(refused.body.code).toBe("SERVER_BUSY")
      await Promise.all(holders)
      await new Promise((r) => setTimeout(r, 100))
      expect((await call(capped.url, "GET", "/health")).status).toBe(200)
    } finally {
      await capped.stop()
    }
  })
})
