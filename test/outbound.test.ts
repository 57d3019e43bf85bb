import { execFileSync } from "node:child_process"
import { X509Certificate } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  fingerprintToColonHex,
  isRedirect,
  type LookupFunction,
  OutboundError,
  type OutboundPolicy,
  outbound,
  outboundPolicyOfConfig,
  outboundRequest,
  PUBLIC_HTTPS_ONLY,
  responseText,
  tlsFingerprint
} from "../src/platform/outbound/index.js"
import { closeIdlePools, openPools } from "../src/platform/outbound/pool.js"

const loopbackHttp: OutboundPolicy = outboundPolicyOfConfig({ outboundAllowPrivate: "127.0.0.0/8", outboundAllowHttp: true })
const loopbackHttpsOnly: OutboundPolicy = outboundPolicyOfConfig({ outboundAllowPrivate: "127.0.0.0/8", outboundAllowHttp: false })

/** A resolver that answers from a table and records every question. */
const fakeDns = (table: Record<string, ReadonlyArray<string>>) => {
  const asked: Array<string> = []
  const lookup: LookupFunction = async (hostname) => {
    asked.push(hostname)
    const answers = table[hostname]
    if (answers === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
    return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  }
  return { lookup, asked }
}

const failure = async (promise: Promise<unknown>): Promise<OutboundError> => {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundError)
    return error as OutboundError
  }
  throw new Error("expected the call to fail")
}

const listen = (server: net.Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)))

const close = (server: net.Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve())
    ;(server as http.Server).closeAllConnections?.()
  })

interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

let server: http.Server
let port: number
const seen: Array<Seen> = []
const hangingClosed: Array<Promise<void>> = []

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString() })
      const path = (req.url ?? "").split("?")[0]
      if (path === "/hello") {
        res.setHeader("X-Answer", "42")
        res.setHeader("Set-Cookie", ["a=1", "b=2"])
        res.end("hello")
      } else if (path === "/echo") {
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString(), bodyBase64: Buffer.concat(chunks).toString("base64") }))
      } else if (path === "/redirect") {
        res.writeHead(302, { location: req.url?.includes("named") ? `http://inside.example:${port}/hello` : "http://169.254.169.254/latest/meta-data" })
        res.end()
      } else if (path === "/hang") {
        // Never answers; tells the test when the client went away.
        hangingClosed.push(new Promise((resolve) => res.on("close", () => resolve())))
      } else if (path === "/big") {
        // 2 MB without a content-length: the cap must work while streaming.
        const piece = Buffer.alloc(64 * 1024, 120)
        let sent = 0
        const pump = () => {
          while (sent < 2 * 1024 * 1024) {
            sent += piece.length
            if (!res.write(piece)) return res.once("drain", pump)
          }
          res.end()
        }
        pump()
      } else if (path === "/big-declared") {
        res.setHeader("content-length", String(2 * 1024 * 1024))
        res.end(Buffer.alloc(2 * 1024 * 1024, 121))
      } else {
        res.statusCode = 404
        res.end()
      }
    })
  })
  port = await listen(server)
})

afterAll(async () => {
  await close(server)
})

describe("outboundRequest refuses internal targets", () => {
  it.each([
    ["http://127.0.0.1/", "scheme_not_allowed"],
    ["https://127.0.0.1/", "address_not_allowed"],
    ["https://169.254.169.254/latest/meta-data", "address_not_allowed"],
    ["http://169.254.169.254/latest/meta-data", "scheme_not_allowed"],
    ["https://[::ffff:10.0.0.1]/", "address_not_allowed"],
    ["http://[::ffff:10.0.0.1]/", "scheme_not_allowed"],
    ["https://2130706433/", "address_not_allowed"],
    ["http://2130706433/", "scheme_not_allowed"],
    ["https://[::1]/", "address_not_allowed"],
    ["http://[::1]/", "scheme_not_allowed"],
    ["https://0.0.0.0/", "address_not_allowed"],
    ["https://10.1.2.3/", "address_not_allowed"],
    ["ftp://example.com/", "scheme_not_allowed"],
    ["https://user:secret@example.com/", "invalid_url"],
    ["::not a url::", "invalid_url"]
  ] as const)("%s → %s", async (url, kind) => {
    const dns = fakeDns({})
    const error = await failure(outboundRequest(url, { policy: PUBLIC_HTTPS_ONLY, lookup: dns.lookup }))
    expect(error.kind).toBe(kind)
    expect(dns.asked).toEqual([])
  })

  it("refuses localhost through the real resolver", async () => {
    const error = await failure(outboundRequest(`https://localhost:${port}/hello`, { policy: PUBLIC_HTTPS_ONLY }))
    expect(error.kind).toBe("address_not_allowed")
    expect(error.message).toMatch(/loopback/)
  })

  it("refuses a name that resolves to a private address", async () => {
    const dns = fakeDns({ "evil.example": ["10.0.0.5"] })
    const error = await failure(outboundRequest("https://evil.example/hook", { policy: PUBLIC_HTTPS_ONLY, lookup: dns.lookup }))
    expect(error.kind).toBe("address_not_allowed")
    expect(error.message).toContain("10.0.0.5")
    expect(dns.asked).toEqual(["evil.example"])
  })

  it("refuses a name when one of several answers is private", async () => {
    const dns = fakeDns({ "multi.example": ["93.184.216.34", "2606:2800:220:1::1", "::ffff:127.0.0.1"] })
    const error = await failure(outboundRequest("https://multi.example/", { policy: PUBLIC_HTTPS_ONLY, lookup: dns.lookup }))
    expect(error.kind).toBe("address_not_allowed")
    expect(error.message).toMatch(/loopback/)
  })

  it("refuses a name resolving to an allow-listed address together with another internal one", async () => {
    const dns = fakeDns({ "app.example": ["127.0.0.1", "192.168.1.1"] })
    const before = seen.length
    const error = await failure(outboundRequest(`https://app.example:${port}/hello`, { policy: loopbackHttpsOnly, lookup: dns.lookup }))
    expect(error.kind).toBe("address_not_allowed")
    expect(seen.length).toBe(before)
  })

  it("reports a name that does not resolve as dns_failed", async () => {
    const dns = fakeDns({})
    const error = await failure(outboundRequest("https://nowhere.example/", { policy: PUBLIC_HTTPS_ONLY, lookup: dns.lookup }))
    expect(error.kind).toBe("dns_failed")
    expect(error.message).toContain("ENOTFOUND")
    const empty = fakeDns({ "empty.example": [] })
    expect((await failure(outboundRequest("https://empty.example/", { policy: PUBLIC_HTTPS_ONLY, lookup: empty.lookup }))).kind).toBe("dns_failed")
  })

  it("gives up on a resolver that never answers at the total timeout", async () => {
    const started = Date.now()
    const error = await failure(
      outboundRequest("https://slow-dns.example/", { policy: PUBLIC_HTTPS_ONLY, lookup: () => new Promise(() => {}), timeoutMs: 200 })
    )
    expect(error.kind).toBe("timeout")
    expect(Date.now() - started).toBeLessThan(2_000)
  })
})

describe("plain http", () => {
  it("is refused when the http switch is off, even to an allow-listed address", async () => {
    const before = seen.length
    const error = await failure(outboundRequest(`http://127.0.0.1:${port}/hello`, { policy: loopbackHttpsOnly }))
    expect(error.kind).toBe("scheme_not_allowed")
    expect(seen.length).toBe(before)
  })

  it("is refused to public addresses even with the http switch on", async () => {
    expect((await failure(outboundRequest("http://8.8.8.8/", { policy: loopbackHttp }))).kind).toBe("scheme_not_allowed")
    const dns = fakeDns({ "public.example": ["8.8.8.8"] })
    const error = await failure(outboundRequest("http://public.example/", { policy: loopbackHttp, lookup: dns.lookup }))
    expect(error.kind).toBe("scheme_not_allowed")
    expect(dns.asked).toEqual(["public.example"])
  })

  it("reaches an allow-listed address with the http switch on", async () => {
    const response = await outboundRequest(`http://127.0.0.1:${port}/hello`, { policy: loopbackHttp })
    expect(response.status).toBe(200)
    expect(responseText(response)).toBe("hello")
    expect(response.headers["x-answer"]).toBe("42")
    expect(response.headers["set-cookie"]).toBe("a=1, b=2")
    expect(response.url).toBe(`http://127.0.0.1:${port}/hello`)
    expect(isRedirect(response)).toBe(false)
  })
})

describe("requests that are allowed", () => {
  it("sends method, body and headers, and keeps Host as the URL's host", async () => {
    const response = await outboundRequest(`http://127.0.0.1:${port}/echo?q=1`, {
      policy: loopbackHttp,
      method: "POST",
      headers: { "content-type": "application/json", "X-Signature": "v1,abc", Host: "spoofed.example" },
      body: JSON.stringify({ hello: "wörld" })
    })
    expect(response.status).toBe(200)
    const echoed = JSON.parse(responseText(response))
    expect(echoed.method).toBe("POST")
    expect(echoed.url).toBe("/echo?q=1")
    expect(echoed.body).toBe('{"hello":"wörld"}')
    expect(echoed.headers["x-signature"]).toBe("v1,abc")
    expect(echoed.headers["content-type"]).toBe("application/json")
    expect(echoed.headers["content-length"]).toBe(String(Buffer.byteLength('{"hello":"wörld"}')))
    expect(echoed.headers.host).toBe(`127.0.0.1:${port}`)
  })

  it("sends binary bodies unchanged", async () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255])
    const response = await outboundRequest(`http://127.0.0.1:${port}/echo`, { policy: loopbackHttp, method: "PUT", body: bytes })
    const echoed = JSON.parse(responseText(response))
    expect(echoed.method).toBe("PUT")
    expect(Array.from(Buffer.from(echoed.bodyBase64, "base64"))).toEqual(Array.from(bytes))
    expect(echoed.headers["content-length"]).toBe("5")
  })

  it("dials the checked address of a name, sending the name as Host, and asks DNS once", async () => {
    const dns = fakeDns({ "app.example": ["127.0.0.1"] })
    const response = await outboundRequest(`http://app.example:${port}/echo`, { policy: loopbackHttp, lookup: dns.lookup })
    expect(response.status).toBe(200)
    expect(JSON.parse(responseText(response)).headers.host).toBe(`app.example:${port}`)
    expect(dns.asked).toEqual(["app.example"])
  })

  it("dials an IPv4-mapped literal as IPv4", async () => {
    const response = await outboundRequest(`http://[::ffff:127.0.0.1]:${port}/echo`, { policy: loopbackHttp })
    expect(response.status).toBe(200)
    expect(JSON.parse(responseText(response)).headers.host).toBe(`[::ffff:7f00:1]:${port}`)
  })

  it("dials an allow-listed IPv6 address", async () => {
    const v6 = http.createServer((req, res) => res.end(`v6 ${req.headers.host}`))
    const v6Port = await new Promise<number>((resolve) =>
      v6.listen(0, "::1", () => resolve((v6.address() as net.AddressInfo).port))
    )
    try {
      const policy = outboundPolicyOfConfig({ outboundAllowPrivate: "::1", outboundAllowHttp: true })
      const response = await outboundRequest(`http://[::1]:${v6Port}/`, { policy })
      expect(responseText(response)).toBe(`v6 [::1]:${v6Port}`)
      const dns = fakeDns({ "six.example": ["::1"] })
      const named = await outboundRequest(`http://six.example:${v6Port}/`, { policy, lookup: dns.lookup })
      expect(responseText(named)).toBe(`v6 six.example:${v6Port}`)
      // The IPv4 loopback is not in that allow-list.
      expect((await failure(outboundRequest(`http://127.0.0.1:${port}/`, { policy }))).kind).toBe("scheme_not_allowed")
    } finally {
      await close(v6)
    }
  })

  it("reads a HEAD answer whose declared length is above the cap", async () => {
    const response = await outboundRequest(`http://127.0.0.1:${port}/big-declared`, {
      policy: loopbackHttp,
      method: "HEAD",
      maxResponseBytes: 1024
    })
    expect(response.status).toBe(200)
    expect(response.headers["content-length"]).toBe(String(2 * 1024 * 1024))
    expect(response.body.length).toBe(0)
  })

  it("works through the Effect wrapper", async () => {
    const response = await Effect.runPromise(outbound(`http://127.0.0.1:${port}/hello`, { policy: loopbackHttp }))
    expect(responseText(response)).toBe("hello")
    const error = await Effect.runPromise(Effect.flip(outbound("https://10.0.0.1/", { policy: PUBLIC_HTTPS_ONLY })))
    expect(error).toBeInstanceOf(OutboundError)
    expect(error._tag).toBe("OutboundError")
    expect(error.kind).toBe("address_not_allowed")
  })
})

describe("redirects", () => {
  it("hands a redirect to a private address back without following it", async () => {
    const dns = fakeDns({})
    const before = seen.length
    const response = await outboundRequest(`http://127.0.0.1:${port}/redirect`, { policy: loopbackHttp, lookup: dns.lookup, timeoutMs: 2_000 })
    expect(response.status).toBe(302)
    expect(isRedirect(response)).toBe(true)
    expect(response.headers.location).toBe("http://169.254.169.254/latest/meta-data")
    expect(response.body.length).toBe(0)
    expect(seen.length).toBe(before + 1)
    expect(dns.asked).toEqual([])
  })

  it("does not even resolve the name a redirect points to", async () => {
    const dns = fakeDns({ "inside.example": ["127.0.0.1"] })
    const before = seen.length
    const response = await outboundRequest(`http://127.0.0.1:${port}/redirect?named`, { policy: loopbackHttp, lookup: dns.lookup })
    expect(response.status).toBe(302)
    expect(isRedirect(response)).toBe(true)
    expect(response.headers.location).toBe(`http://inside.example:${port}/hello`)
    expect(dns.asked).toEqual([])
    expect(seen.slice(before).map((s) => s.url)).toEqual(["/redirect?named"])
  })
})

describe("limits", () => {
  it("stops a server that never answers at the total timeout", async () => {
    const started = Date.now()
    const closedBefore = hangingClosed.length
    const error = await failure(outboundRequest(`http://127.0.0.1:${port}/hang`, { policy: loopbackHttp, timeoutMs: 300 }))
    expect(error.kind).toBe("timeout")
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(250)
    expect(elapsed).toBeLessThan(3_000)
    expect(hangingClosed.length).toBe(closedBefore + 1)
    // The connection is really closed, not left hanging.
    await hangingClosed[closedBefore]
  })

  it("stops reading a streamed body at the size cap", async () => {
    const error = await failure(outboundRequest(`http://127.0.0.1:${port}/big`, { policy: loopbackHttp, maxResponseBytes: 64 * 1024 }))
    expect(error.kind).toBe("response_too_large")
  })

  it("refuses a declared length above the cap before reading", async () => {
    const error = await failure(outboundRequest(`http://127.0.0.1:${port}/big-declared`, { policy: loopbackHttp, maxResponseBytes: 64 * 1024 }))
    expect(error.kind).toBe("response_too_large")
    expect(error.message).toContain(String(2 * 1024 * 1024))
  })

  it("accepts a body right up to the cap", async () => {
    const response = await outboundRequest(`http://127.0.0.1:${port}/big`, { policy: loopbackHttp, maxResponseBytes: 2 * 1024 * 1024 })
    expect(response.body.length).toBe(2 * 1024 * 1024)
  })

  it("reports a refused connection as a network error", async () => {
    const closed = net.createServer()
    const closedPort = await listen(closed)
    await close(closed)
    const error = await failure(outboundRequest(`http://127.0.0.1:${closedPort}/`, { policy: loopbackHttp }))
    expect(error.kind).toBe("network")
    expect(error.message).toContain("ECONNREFUSED")
  })

  it("aborts the request when the Effect is interrupted", async () => {
    const closedBefore = hangingClosed.length
    await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(outbound(`http://127.0.0.1:${port}/hang`, { policy: loopbackHttp }))
        while (hangingClosed.length === closedBefore) yield* Effect.sleep("10 millis")
        yield* Fiber.interrupt(fiber)
      })
    )
    await hangingClosed[closedBefore]
  })

  it("aborts on the caller's signal", async () => {
    const controller = new AbortController()
    const closedBefore = hangingClosed.length
    const pending = outboundRequest(`http://127.0.0.1:${port}/hang`, { policy: loopbackHttp, signal: controller.signal })
    while (hangingClosed.length === closedBefore) await new Promise((resolve) => setTimeout(resolve, 10))
    controller.abort()
    const error = await failure(pending)
    expect(error.kind).toBe("network")
    expect(error.message).toMatch(/aborted/)
    await hangingClosed[closedBefore]
  })
})

describe("TLS", () => {
  let dir: string
  let certPem: string
  let tlsServer: https.Server
  let tlsPort: number
  const serverNames: Array<string> = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "outbound-tls-"))
    execFileSync(
      "openssl",
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-days", "1",
        "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")
      ],
      { stdio: "ignore" }
    )
    certPem = readFileSync(join(dir, "cert.pem"), "utf8")
    tlsServer = https.createServer(
      {
        key: readFileSync(join(dir, "key.pem")),
        cert: certPem,
        // Called only when the client sends a server name; no context means the default one.
        SNICallback: (name, done) => {
          serverNames.push(name)
          done(null, undefined)
        }
      },
      (_req, res) => res.end("secure hello")
    )
    tlsPort = await listen(tlsServer)
  })

  afterAll(async () => {
    await close(tlsServer)
    rmSync(dir, { recursive: true, force: true })
  })

  it("reads the fingerprint of the certificate, sending the host name as SNI", async () => {
    const dns = fakeDns({ localhost: ["127.0.0.1"] })
    const fingerprint = await tlsFingerprint(`https://localhost:${tlsPort}/`, { policy: loopbackHttpsOnly, lookup: dns.lookup })
    const certificate = new X509Certificate(certPem)
    const expected = `sha256:${Buffer.from(await crypto.subtle.digest("SHA-256", certificate.raw)).toString("hex")}`
    expect(fingerprint).toBe(expected)
    expect(fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(fingerprintToColonHex(fingerprint)).toBe(certificate.fingerprint256)
    expect(serverNames[serverNames.length - 1]).toBe("localhost")
  })

  it("sends no SNI to an address literal", async () => {
    const namesBefore = serverNames.length
    const fingerprint = await tlsFingerprint(`https://127.0.0.1:${tlsPort}/`, { policy: loopbackHttpsOnly })
    expect(fingerprintToColonHex(fingerprint)).toBe(new X509Certificate(certPem).fingerprint256)
    expect(serverNames.length).toBe(namesBefore)
  })

  it("applies the same address checks", async () => {
    expect((await failure(tlsFingerprint(`https://127.0.0.1:${tlsPort}/`, { policy: PUBLIC_HTTPS_ONLY }))).kind).toBe("address_not_allowed")
    const dns = fakeDns({ "evil.example": ["10.0.0.5"] })
    expect((await failure(tlsFingerprint("https://evil.example/", { policy: PUBLIC_HTTPS_ONLY, lookup: dns.lookup }))).kind).toBe(
      "address_not_allowed"
    )
    expect((await failure(tlsFingerprint(`http://127.0.0.1:${tlsPort}/`, { policy: loopbackHttp }))).kind).toBe("scheme_not_allowed")
  })

  it("times out on a server that never completes the handshake", async () => {
    // Reads (and ignores) the ClientHello, never answers it.
    const silent = net.createServer((socket) => socket.resume())
    const silentPort = await listen(silent)
    try {
      const error = await failure(tlsFingerprint(`https://127.0.0.1:${silentPort}/`, { policy: loopbackHttpsOnly, timeoutMs: 200 }))
      expect(error.kind).toBe("timeout")
      const slow = await failure(
        outboundRequest(`https://127.0.0.1:${silentPort}/`, { policy: loopbackHttpsOnly, connectTimeoutMs: 200, timeoutMs: 5_000 })
      )
      expect(slow.kind).toBe("connect_timeout")
      const pooledSlow = await failure(
        outboundRequest(`https://127.0.0.1:${silentPort}/`, { policy: loopbackHttpsOnly, keepAlive: true, connectTimeoutMs: 200, timeoutMs: 5_000 })
      )
      expect(pooledSlow.kind).toBe("connect_timeout")
    } finally {
      await new Promise<void>((resolve) => {
        silent.close(() => resolve())
      })
    }
  })

  it("verifies the certificate for the host name on https requests", async () => {
    const dns = fakeDns({ localhost: ["127.0.0.1"] })
    const untrusted = await failure(outboundRequest(`https://localhost:${tlsPort}/`, { policy: loopbackHttpsOnly, lookup: dns.lookup }))
    expect(untrusted.kind).toBe("network")
    const response = await outboundRequest(`https://localhost:${tlsPort}/`, { policy: loopbackHttpsOnly, lookup: dns.lookup, ca: certPem })
    expect(response.status).toBe(200)
    expect(responseText(response)).toBe("secure hello")
    expect(serverNames[serverNames.length - 1]).toBe("localhost")
  })

  it("verifies pooled https connections the same way, with a pool per CA", async () => {
    const dns = fakeDns({ localhost: ["127.0.0.1"] })
    const url = `https://localhost:${tlsPort}/`
    expect((await failure(outboundRequest(url, { policy: loopbackHttpsOnly, lookup: dns.lookup, keepAlive: true }))).kind).toBe("network")
    const response = await outboundRequest(url, { policy: loopbackHttpsOnly, lookup: dns.lookup, ca: certPem, keepAlive: true })
    expect(responseText(response)).toBe("secure hello")
    expect(serverNames[serverNames.length - 1]).toBe("localhost")
    // The connection trusted through the CA is not lent to a request without it.
    expect((await failure(outboundRequest(url, { policy: loopbackHttpsOnly, lookup: dns.lookup, keepAlive: true }))).kind).toBe("network")
    // Nor to the address literal: the certificate names localhost, not 127.0.0.1.
    const literal = await failure(outboundRequest(`https://127.0.0.1:${tlsPort}/`, { policy: loopbackHttpsOnly, ca: certPem, keepAlive: true }))
    expect(literal.kind).toBe("network")
    expect(literal.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|altnames/i)
  })
})

describe("pooled connections (keepAlive)", () => {
  /** Listens on every IPv4 address, so 127.0.0.1 and 127.0.0.2 are two targets of one server; answers which connection carried each request. */
  let pooled: http.Server
  let pooledPort: number
  const closedConnections: Array<number> = []
  const pooledHanging: Array<Promise<void>> = []
  const bigConnections: Array<number> = []
  const closedSoon = async (connection: number) => {
    while (!closedConnections.includes(connection)) await new Promise((resolve) => setTimeout(resolve, 10))
  }

  beforeAll(async () => {
    pooled = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        const path = (req.url ?? "").split("?")[0]
        if (path === "/hang") {
          pooledHanging.push(new Promise((resolve) => res.on("close", () => resolve())))
          return
        }
        if (path === "/big") {
          bigConnections.push(req.socket.remotePort ?? 0)
          res.end(Buffer.alloc(256 * 1024, 120))
          return
        }
        if (path === "/redirect") {
          res.writeHead(302, { location: "http://169.254.169.254/" }).end()
          return
        }
        res.setHeader("content-type", "application/json")
        res.end(
          JSON.stringify({
            local: req.socket.localAddress,
            connection: req.socket.remotePort,
            host: req.headers.host,
            url: req.url,
            body: Buffer.concat(chunks).toString()
          })
        )
      })
    })
    pooled.on("connection", (socket) => {
      const remote = socket.remotePort ?? 0
      socket.on("close", () => closedConnections.push(remote))
    })
    pooledPort = await new Promise<number>((resolve) => pooled.listen(0, "0.0.0.0", () => resolve((pooled.address() as net.AddressInfo).port)))
  })

  afterAll(async () => {
    closeIdlePools(0)
    await close(pooled)
  })

  const ask = async (url: string, options: Partial<Parameters<typeof outboundRequest>[1]> = {}) => {
    const response = await outboundRequest(url, { policy: loopbackHttp, keepAlive: true, ...options })
    expect(response.status).toBe(200)
    return JSON.parse(responseText(response)) as { local: string; connection: number; host: string; url: string; body: string }
  }

  it("reuses a connection for the same checked address", async () => {
    const first = await ask(`http://127.0.0.1:${pooledPort}/a`)
    // undici lends a connection again only after a turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 10))
    const second = await ask(`http://127.0.0.1:${pooledPort}/b`)
    expect(second.connection).toBe(first.connection)
    expect(second.url).toBe("/b")
  })

  it("checks every request and never reuses a connection for another checked address", async () => {
    const answers: Record<string, Array<string>> = { "app.example": ["127.0.0.1"] }
    const asked: Array<string> = []
    const lookup: LookupFunction = async (hostname) => {
      asked.push(hostname)
      return (answers[hostname] ?? []).map((address) => ({ address, family: 4 }))
    }
    const url = `http://app.example:${pooledPort}/named`
    const first = await ask(url, { lookup })
    expect(first).toMatchObject({ local: "127.0.0.1", host: `app.example:${pooledPort}` })
    // The name now points elsewhere: the request goes there, on a connection of its own.
    answers["app.example"] = ["127.0.0.2"]
    const moved = await ask(url, { lookup })
    expect(moved.local).toBe("127.0.0.2")
    expect(moved.connection).not.toBe(first.connection)
    // And now somewhere not allowed: refused although a pooled connection for the name is open.
    answers["app.example"] = ["10.0.0.5"]
    const refused = await failure(outboundRequest(url, { policy: loopbackHttp, keepAlive: true, lookup }))
    expect(refused.kind).toBe("scheme_not_allowed")
    expect(refused.message).toContain("10.0.0.5")
    answers["app.example"] = ["127.0.0.1"]
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect((await ask(url, { lookup })).connection).toBe(first.connection)
    expect(asked).toEqual(["app.example", "app.example", "app.example", "app.example"])
  })

  it("refuses disallowed addresses before dialling", async () => {
    const before = closedConnections.length
    const literal = await failure(outboundRequest(`https://127.0.0.1:${pooledPort}/`, { policy: PUBLIC_HTTPS_ONLY, keepAlive: true }))
    expect(literal.kind).toBe("address_not_allowed")
    const dns = fakeDns({ "evil.example": ["127.0.0.1"] })
    const named = await failure(outboundRequest(`https://evil.example:${pooledPort}/`, { policy: PUBLIC_HTTPS_ONLY, keepAlive: true, lookup: dns.lookup }))
    expect(named.kind).toBe("address_not_allowed")
    const http = await failure(outboundRequest(`http://127.0.0.1:${pooledPort}/`, { policy: loopbackHttpsOnly, keepAlive: true }))
    expect(http.kind).toBe("scheme_not_allowed")
    expect(closedConnections.length).toBe(before)
  })

  it("pipelines requests on few connections, each answer to its own request", async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        ask(`http://127.0.0.1:${pooledPort}/pipe?${index}`, { method: "POST", body: `body ${index}`, connections: 4, pipelining: 10 })
      )
    )
    answers.forEach((answer, index) => {
      expect(answer).toMatchObject({ url: `/pipe?${index}`, body: `body ${index}` })
    })
    expect(new Set(answers.map((answer) => answer.connection)).size).toBeLessThanOrEqual(4)
  })

  it("hands a redirect back without following it", async () => {
    const response = await outboundRequest(`http://127.0.0.1:${pooledPort}/redirect`, { policy: loopbackHttp, keepAlive: true })
    expect(response.status).toBe(302)
    expect(response.headers.location).toBe("http://169.254.169.254/")
  })

  it("caps the body and closes the connection it was read from", async () => {
    const error = await failure(outboundRequest(`http://127.0.0.1:${pooledPort}/big`, { policy: loopbackHttp, keepAlive: true, maxResponseBytes: 100 * 1024 }))
    expect(error.kind).toBe("response_too_large")
    // The rest of that answer is never read: its connection is closed, and the pool goes on without it.
    await closedSoon(bigConnections[bigConnections.length - 1]!)
    expect((await ask(`http://127.0.0.1:${pooledPort}/x`)).url).toBe("/x")
    const whole = await outboundRequest(`http://127.0.0.1:${pooledPort}/big`, { policy: loopbackHttp, keepAlive: true, maxResponseBytes: 256 * 1024 })
    expect(whole.body.length).toBe(256 * 1024)
  })

  it("stops a request that gets no answer at the total timeout and closes its connection", async () => {
    const waiting = pooledHanging.length
    const started = Date.now()
    const error = await failure(outboundRequest(`http://127.0.0.1:${pooledPort}/hang`, { policy: loopbackHttp, keepAlive: true, timeoutMs: 300 }))
    expect(error.kind).toBe("timeout")
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(pooledHanging.length).toBe(waiting + 1)
    await pooledHanging[waiting]
  })

  it("reports a refused connection as a network error", async () => {
    const closed = net.createServer()
    const closedPort = await listen(closed)
    await close(closed)
    const error = await failure(outboundRequest(`http://127.0.0.1:${closedPort}/`, { policy: loopbackHttp, keepAlive: true }))
    expect(error.kind).toBe("network")
    expect(error.message).toContain("ECONNREFUSED")
  })

  it("closes idle pools", async () => {
    const answer = await ask(`http://127.0.0.1:${pooledPort}/idle`)
    expect(openPools()).toBeGreaterThan(0)
    expect(closeIdlePools(0)).toBeGreaterThan(0)
    expect(openPools()).toBe(0)
    await closedSoon(answer.connection)
  })
})
