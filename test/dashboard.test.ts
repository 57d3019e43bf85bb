/**
 * The dashboard's static serving (no browser): index.html for every client-side route with a strict
 * CSP and no-cache, hashed assets cached for a year, 404 for unknown assets, no way out of the build
 * directory, and a clear 503 when the dashboard was not built. test/support/dashboard-setup.ts builds it.
 * The dashboard's files are not part of the API contract (protocol/), so every request here stays raw.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { call } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway } from "./support/server.js"

/** Raw call: the dashboard's files (HTML, scripts, styles) are served outside the contract. */
const get = (path: string, headers?: Record<string, string>) =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => call(server.url, "GET", path, { headers })))

/** A request whose path and headers are sent byte for byte (fetch would resolve `..` first and decompress). */
const rawGet = (path: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(Gateway, (server) =>
    Effect.promise(
      () =>
        new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; bytes: Buffer }>((resolve, reject) => {
          const url = new URL(server.url)
          const req = request({ host: url.hostname, port: url.port, path, method: "GET", headers }, (res) => {
            const chunks: Buffer[] = []
            res.on("data", (chunk) => chunks.push(chunk))
            res.on("end", () => {
              const bytes = Buffer.concat(chunks)
              resolve({ status: res.statusCode ?? 0, headers: res.headers, text: bytes.toString("utf8"), bytes })
            })
          })
          req.on("error", reject)
          req.end()
        })
    )
  )

const packageJson = readFileSync("package.json", "utf8")

liveLayer(Gateway.layer())("dashboard static files", (it) => {
  it.effect("answers index.html with a strict CSP, no-cache and no inline code", () =>
    Effect.gen(function* () {
      const index = yield* get("/dashboard")
      expect(index.status).toBe(200)
      expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(index.headers.get("cache-control")).toBe("no-cache")
      expect(index.headers.get("x-content-type-options")).toBe("nosniff")
      const csp = index.headers.get("content-security-policy") ?? ""
      for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) {
        expect(csp).toContain(directive)
      }
      expect(csp).not.toContain("unsafe")
      // Every script is a file; no style element, no style attribute, nothing from another origin.
      expect(index.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
      expect(index.text).not.toMatch(/<style|\sstyle=/)
      expect(index.text).not.toMatch(/(src|href)="(https?:)?\/\//)
      const etag = index.headers.get("etag")!
      expect((yield* get("/dashboard", { "if-none-match": etag })).status).toBe(304)
    })
  )

  it.effect("answers index.html for client-side routes", () =>
    Effect.gen(function* () {
      const index = (yield* get("/dashboard")).text
      for (const path of ["/dashboard/", "/dashboard/approvals", "/dashboard/actions/act_x", "/dashboard/sign-in?next=%2Fdashboard", "/dashboard/anything/else"]) {
        const page = yield* get(path)
        expect(page.status, path).toBe(200)
        expect(page.text, path).toBe(index)
        expect(page.headers.get("content-security-policy"), path).toContain("script-src 'self'")
      }
    })
  )

  it.effect("serves hashed assets for a year with their content types", () =>
    Effect.gen(function* () {
      const index = (yield* get("/dashboard")).text
      const script = /<script[^>]*src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index)![1]!
      const style = /<link[^>]*href="(\/dashboard\/assets\/[^"]+\.css)"/.exec(index)![1]!
      expect(script).toMatch(/-[A-Za-z0-9_-]{8,}\.js$/)
      const js = yield* get(script)
      expect(js.status).toBe(200)
      expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(js.headers.get("x-content-type-options")).toBe("nosniff")
      const css = yield* get(style)
      expect(css.status).toBe(200)
      expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
      expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    })
  )

  it.effect("serves brotli, gzip or plain as the client accepts, each with its own entity tag", () =>
    Effect.gen(function* () {
      const index = (yield* get("/dashboard")).text
      const script = /<script[^>]*src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index)![1]!
      const plain = yield* rawGet(script)
      expect(plain.headers["content-encoding"]).toBeUndefined()
      expect(plain.headers.vary).toBe("accept-encoding")
      const br = yield* rawGet(script, { "accept-encoding": "gzip, deflate, br" })
      expect(br.headers["content-encoding"]).toBe("br")
      expect(brotliDecompressSync(br.bytes).equals(plain.bytes)).toBe(true)
      expect(br.bytes.length).toBeLessThan(plain.bytes.length / 2)
      const gzip = yield* rawGet(script, { "accept-encoding": "gzip" })
      expect(gzip.headers["content-encoding"]).toBe("gzip")
      expect(gunzipSync(gzip.bytes).equals(plain.bytes)).toBe(true)
      // q=0 refuses an encoding.
      expect((yield* rawGet(script, { "accept-encoding": "br;q=0, gzip" })).headers["content-encoding"]).toBe("gzip")
      expect((yield* rawGet(script, { "accept-encoding": "identity" })).headers["content-encoding"]).toBeUndefined()
      const tags = new Set([plain.headers.etag, br.headers.etag, gzip.headers.etag])
      expect(tags.size).toBe(3)
      // A revalidation answers 304 for the tag of the encoding asked for.
      expect((yield* rawGet(script, { "accept-encoding": "br", "if-none-match": String(br.headers.etag) })).status).toBe(304)
      expect((yield* rawGet(script, { "accept-encoding": "gzip", "if-none-match": String(br.headers.etag) })).status).toBe(200)
      // index.html too, keeping its CSP.
      const html = yield* rawGet("/dashboard/agents", { "accept-encoding": "br" })
      expect(html.headers["content-encoding"]).toBe("br")
      expect(html.headers["content-security-policy"]).toContain("script-src 'self'")
      expect(brotliDecompressSync(html.bytes).toString("utf8")).toContain('<div id="app">')
    })
  )

  it.effect("answers 404 for a missing asset, never index.html", () =>
    Effect.gen(function* () {
      const missing = yield* get("/dashboard/assets/index-missing0.js")
      expect(missing.status).toBe(404)
      expect(missing.body.code).toBe("NOT_FOUND")
    })
  )

  it.effect("never serves a file outside the build", () =>
    Effect.gen(function* () {
      for (const path of [
        "/dashboard/assets/../../package.json",
        "/dashboard/assets/..%2f..%2fpackage.json",
        "/dashboard/assets/%2e%2e/%2e%2e/%2e%2e/package.json",
        "/dashboard/../package.json",
        "/dashboard/..%2f..%2fpackage.json",
        "/dashboard/assets/../../../src/main.ts",
        "/dashboard//etc/passwd"
      ]) {
        const reply = yield* rawGet(path)
        expect(reply.text, path).not.toBe(packageJson)
        expect(reply.text, path).not.toContain('"name": "agent-accountability-gateway"')
        expect(reply.text, path).not.toContain("root:x:0:0")
        expect([200, 400, 404], path).toContain(reply.status)
        // Anything answered 200 is the app's own index.html.
        if (reply.status === 200) expect(reply.text, path).toContain('<div id="app">')
      }
    })
  )
})

const empty = mkdtempSync(join(tmpdir(), "dashboard-missing-"))

liveLayer(Gateway.layer({ DASHBOARD_DIR: empty }))("dashboard not built", (it) => {
  it.effect("answers 503 saying to run npm run build, as HTML or JSON", () =>
    Effect.gen(function* () {
      const html = yield* get("/dashboard/actions/act_x", { accept: "text/html" })
      expect(html.status).toBe(503)
      expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(html.text).toContain("npm run build")
      const json = yield* get("/dashboard", { accept: "application/json" })
      expect(json.status).toBe(503)
      expect(json.body).toMatchObject({ code: "DASHBOARD_NOT_BUILT" })
      expect(json.body.message).toContain("npm run build")
      rmSync(empty, { recursive: true, force: true })
    })
  )
})
