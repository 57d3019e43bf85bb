/**
 * The dashboard's static serving (no browser): index.html for every client-side route with a strict
 * CSP and no-cache, hashed assets cached for a year, 404 for unknown assets, no way out of the build
 * directory, and a clear 503 when the dashboard was not built. test/support/dashboard-setup.ts builds it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { call } from "./support/client.js"
import { useServer } from "./support/server.js"

/** A request whose path is sent byte for byte (fetch would resolve `..` first). */
const rawGet = (base: string, path: string) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const url = new URL(base)
    const req = request({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      const chunks: Buffer[] = []
      res.on("data", (chunk) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }))
    })
    req.on("error", reject)
    req.end()
  })

const packageJson = readFileSync("package.json", "utf8")

describe("dashboard static files", () => {
  const server = useServer()

  it("answers index.html with a strict CSP, no-cache and no inline code", async () => {
    const index = await call(server.url, "GET", "/dashboard")
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
    expect((await call(server.url, "GET", "/dashboard", { headers: { "if-none-match": etag } })).status).toBe(304)
  })

  it("answers index.html for client-side routes", async () => {
    const index = (await call(server.url, "GET", "/dashboard")).text
    for (const path of ["/dashboard/", "/dashboard/approvals", "/dashboard/actions/act_x", "/dashboard/sign-in?next=%2Fdashboard", "/dashboard/anything/else"]) {
      const page = await call(server.url, "GET", path)
      expect(page.status, path).toBe(200)
      expect(page.text, path).toBe(index)
      expect(page.headers.get("content-security-policy"), path).toContain("script-src 'self'")
    }
  })

  it("serves hashed assets for a year with their content types", async () => {
    const index = (await call(server.url, "GET", "/dashboard")).text
    const script = /<script[^>]*src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(index)![1]!
    const style = /<link[^>]*href="(\/dashboard\/assets\/[^"]+\.css)"/.exec(index)![1]!
    expect(script).toMatch(/-[A-Za-z0-9_-]{8,}\.js$/)
    const js = await call(server.url, "GET", script)
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(js.headers.get("x-content-type-options")).toBe("nosniff")
    const css = await call(server.url, "GET", style)
    expect(css.status).toBe(200)
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
  })

  it("answers 404 for a missing asset, never index.html", async () => {
    const missing = await call(server.url, "GET", "/dashboard/assets/index-missing0.js")
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe("NOT_FOUND")
  })

  it("never serves a file outside the build", async () => {
    for (const path of [
      "/dashboard/assets/../../package.json",
      "/dashboard/assets/..%2f..%2fpackage.json",
      "/dashboard/assets/%2e%2e/%2e%2e/%2e%2e/package.json",
      "/dashboard/../package.json",
      "/dashboard/..%2f..%2fpackage.json",
      "/dashboard/assets/../../../src/main.ts",
      "/dashboard//etc/passwd"
    ]) {
      const reply = await rawGet(server.url, path)
      expect(reply.text, path).not.toBe(packageJson)
      expect(reply.text, path).not.toContain('"name": "agent-accountability-gateway"')
      expect(reply.text, path).not.toContain("root:x:0:0")
      expect([200, 400, 404], path).toContain(reply.status)
      // Anything answered 200 is the app's own index.html.
      if (reply.status === 200) expect(reply.text, path).toContain('<div id="app">')
    }
  })
})

describe("dashboard not built", () => {
  const empty = mkdtempSync(join(tmpdir(), "dashboard-missing-"))
  const server = useServer(() => ({ DASHBOARD_DIR: empty }))

  it("answers 503 saying to run npm run build, as HTML or JSON", async () => {
    const html = await call(server.url, "GET", "/dashboard/actions/act_x", { headers: { accept: "text/html" } })
    expect(html.status).toBe(503)
    expect(html.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(html.text).toContain("npm run build")
    const json = await call(server.url, "GET", "/dashboard", { headers: { accept: "application/json" } })
    expect(json.status).toBe(503)
    expect(json.body).toMatchObject({ code: "DASHBOARD_NOT_BUILT" })
    expect(json.body.message).toContain("npm run build")
    rmSync(empty, { recursive: true, force: true })
  })
})
