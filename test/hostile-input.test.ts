/**
 * Input no handler can store — U+0000, lone surrogates, runaway nesting, broken
 * percent-encoding — is refused at the edge with 422 VALIDATION_ERROR naming
 * each place, on every route of the route table (public and authenticated);
 * nothing hostile ever yields a 5xx.
 */
import { HttpApi } from "effect/http-api"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { GatewayApi } from "../protocol/api.js"
import { jsonIssues, MAX_JSON_DEPTH, urlIssues } from "../src/gateway/screen.js"
import { call, type Reply, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { useServer } from "./support/server.js"

interface Route {
  readonly method: string
  readonly path: string
  readonly authenticated: boolean
}

const routes: Route[] = [
  { method: "GET", path: "/approve/:code", authenticated: false },
  { method: "POST", path: "/approve/:code", authenticated: false }
]
HttpApi.reflect(GatewayApi, {
  onGroup() {},
  onEndpoint({ endpoint, middleware }) {
    const authenticated = [...middleware].some((m: any) => m.key === "gateway/Authenticated")
    routes.push({ method: endpoint.method, path: endpoint.path, authenticated })
  }
})
const withParams = routes.filter((route) => route.path.includes(":"))
const withBody = routes.filter((route) => ["POST", "PUT", "PATCH"].includes(route.method))
const ID = "00000000-0000-0000-0000-000000000000"
const fill = (path: string, value = ID) => path.replace(/:[a-z_]+/g, value)

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Hostile"))

const send = (route: Route, path: string, options: { raw?: string; headers?: Record<string, string> } = {}) =>
  call(server.url, route.method, path, {
    ...(route.authenticated ? { token: org.token } : {}),
    ...(options.raw !== undefined ? { raw: options.raw } : {}),
    ...(options.headers ? { headers: options.headers } : {})
  })

/** 422 VALIDATION_ERROR in the contract's shape, listing exactly `paths` (in order). */
const expectRefused = (reply: Reply, paths: string[], label: string) => {
  expect(reply.status, `${label}: ${reply.text.slice(0, 200)}`).toBe(422)
  expect(reply.body.code).toBe("VALIDATION_ERROR")
  expect(typeof reply.body.message).toBe("string")
  expect(reply.body.request_id).toBe(reply.headers.get("x-request-id"))
  expect(reply.body.details.issues.map((issue: { path: string }) => issue.path), label).toEqual(paths)
  for (const issue of reply.body.details.issues) expect(typeof issue.message).toBe("string")
}

/** JSON objects nested `levels` deep under `key` ({"a":{"a":…}}), as text. */
const nested = (levels: number, leaf = "1") => `${'{"a":'.repeat(levels)}${leaf}${"}".repeat(levels)}`

describe("refused at the edge", () => {
  it("bad percent-encoding or %00 in a path id of every route → 422 naming `path`", async () => {
    for (const route of withParams) {
      for (const value of ["%00", "a%00b", "%ED%A0%80", "%C3", "%ZZ", "%c0%80"]) {
        expectRefused(await send(route, fill(route.path, value)), ["path"], `${route.method} ${route.path} ${value}`)
      }
    }
    // Also before routing: an unknown path is refused the same way rather than 404.
    expectRefused(await call(server.url, "GET", "/no/such/%00"), ["path"], "unknown route")
  })

  it("…in query values and names of every route → 422 naming `query.<name>` / `query`", async () => {
    for (const route of routes) {
      const path = fill(route.path)
      expectRefused(await send(route, `${path}?page=1&note=a%00b`), ["query.note"], `${route.method} ${route.path} value`)
      expectRefused(await send(route, `${path}?x=%ED%A0%80&y=%zz&z=caf%C3%A9`), ["query.x", "query.y"], `${route.method} ${route.path} values`)
      expectRefused(await send(route, `${path}?a%00b=1`), ["query"], `${route.method} ${route.path} name`)
    }
  })

  it("U+0000 and lone surrogates anywhere in a JSON body of every route with a body → 422 naming each field", async () => {
    const body = String.raw`{"name":"a\u0000b","list":["ok","\ud800"],"nested":{"\udc00key":1,"deep":{"x":"\u0000"}},"pair":"\ud83d\ude00","esc":"\u0041"}`
    for (const route of withBody) {
      expectRefused(
        await send(route, fill(route.path), { raw: body }),
        ["name", "list.1", "nested.\uFFFDkey", "nested.deep.x"],
        `${route.method} ${route.path}`
      )
    }
  })

  it("a body that is a bare hostile string is named `body`; at most 20 issues are listed", async () => {
    expectRefused(await call(server.url, "POST", "/api/v1/auth/login", { raw: String.raw`"\ud800"` }), ["body"], "bare string")
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, "\u0000"])))
    const reply = await call(server.url, "POST", "/api/v1/auth/login", { raw: many })
    expectRefused(reply, Array.from({ length: 20 }, (_, i) => `f${i}`), "many")
  })

  it(`nesting deeper than ${MAX_JSON_DEPTH} levels → 422 at the first level too deep; ${MAX_JSON_DEPTH} levels pass`, async () => {
    const action = (context: string) => `{"action_type":"deep","details":"nested context","context":${context}}`
    // The root object is level 1; `context` and the objects below it make the other 63.
    const deepest = await call(server.url, "POST", "/api/v1/actions", { token: org.key, raw: action(nested(MAX_JSON_DEPTH - 1)) })
    expect(deepest.status, deepest.text).toBe(201)
    const firstTooDeep = ["context", ...Array(MAX_JSON_DEPTH - 1).fill("a")].join(".")
    const tooDeep = await call(server.url, "POST", "/api/v1/actions", { token: org.key, raw: action(nested(MAX_JSON_DEPTH)) })
    expectRefused(tooDeep, [firstTooDeep], "65 levels")
    const runaway = await call(server.url, "POST", "/api/v1/actions", { token: org.key, raw: action(nested(10_000)) })
    expectRefused(runaway, [firstTooDeep], "10,000 levels")
    const arrays = await call(server.url, "POST", "/api/v1/auth/login", { raw: "[".repeat(500_000) + "]".repeat(500_000) })
    expectRefused(arrays, [Array(MAX_JSON_DEPTH).fill("0").join(".")], "500,000 arrays")
  })

  it("named fields on public and authenticated routes, and the approval page's form", async () => {
    const register = await call(server.url, "POST", "/api/v1/auth/register", {
      raw: String.raw`{"email":"a\u0000@example.test","password":"long enough password","org_name":"x"}`
    })
    expectRefused(register, ["email"], "register")
    const action = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      raw: String.raw`{"action_type":"pay\u0000","details":"d","context":{"a":{"b":"\udfff"}}}`
    })
    expectRefused(action, ["action_type", "context.a.b"], "action")
    const policy = await call(server.url, "POST", "/api/v1/policies", {
      token: org.key,
      raw: String.raw`{"name":"\ud800","mode":"rules","decision":"deny","conditions":[{"field":"action_type","op":"eq","value":"\u0000"}]}`
    })
    expectRefused(policy, ["name", "conditions.0.value"], "policy")
    const form = await call(server.url, "POST", "/approve/ABCDEFGHJK", {
      raw: "decision=deny&reason=a%00b",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expectRefused(form, ["body.reason"], "form")
    expectRefused(await call(server.url, "GET", "/api/v1/verify/%00"), ["path"], "public verify")
  })

  it("what is not refused: non-JSON stays 400 INVALID_JSON, escapes of ordinary characters and encoded UTF-8 pass", async () => {
    const broken = await call(server.url, "POST", "/api/v1/auth/login", { raw: String.raw`{"email":"\u0000` })
    expect(broken.status).toBe(400)
    expect(broken.body.code).toBe("INVALID_JSON")
    const escaped = await call(server.url, "POST", "/api/v1/actions", {
      token: org.key,
      raw: String.raw`{"action_type":"caf\u00e9 \ud83d\ude00","details":"\u0041\"\\u0000","agent_id":"caf%C3%A9"}`
    })
    expect(escaped.status, escaped.text).toBe(201)
    const listed = await call(server.url, "GET", "/api/v1/actions?agent_id=caf%C3%A9&action_type=caf%C3%A9%20%F0%9F%98%80", { token: org.key })
    expect(listed.status).toBe(200)
  })
})

describe("no hostile value yields a 5xx", () => {
  const hostileText = fc.constantFrom("\u0000", "\ud800", "\udfff", "a\u0000", "\ud83d", "x\udc00y")
  const hostileEncoded = fc.constantFrom("%00", "%ED%A0%80", "%C3", "%ZZ", "%", "%E2%82", "%F4%90%80%80", "%c0%af")
  const benignEncoded = fc.constantFrom("%41", "caf%C3%A9", "%F0%9F%98%80", "%2F", "%25", "1e400", "99999999999999999999999", "-1", "a".repeat(10_000))
  const place = fc.constantFrom("path", "query value", "query name", "body value", "body key", "body deep", "benign path", "benign query")

  it("property: any route, any place, any hostile value → refused with the shape, or handled below 500", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), place, hostileText, hostileEncoded, benignEncoded, async (route, where, text, encoded, benign) => {
        let path = fill(route.path)
        let raw: string | undefined
        let expected: string[] | undefined
        switch (where) {
          case "path":
            if (!route.path.includes(":")) return
            path = fill(route.path, `id${encoded}`)
            expected = ["path"]
            break
          case "query value":
            path += `?q=${encoded}`
            expected = ["query.q"]
            break
          case "query name":
            path += `?${encoded}=1`
            expected = ["query"]
            break
          case "body value":
          case "body key":
          case "body deep":
            if (!["POST", "PUT", "PATCH"].includes(route.method)) return
            raw =
              where === "body value"
                ? JSON.stringify({ field: { inner: [text] } })
                : where === "body key"
                  ? JSON.stringify({ [text]: "v" })
                  : `{"field":${nested(200)}}`
            expected = where === "body value" ? ["field.inner.0"] : where === "body key" ? [text.replaceAll("\u0000", "\uFFFD").replace(/\p{Surrogate}/gu, "\uFFFD")] : [["field", ...Array(MAX_JSON_DEPTH - 1).fill("a")].join(".")]
            break
          case "benign path":
            if (!route.path.includes(":")) return
            path = fill(route.path, benign)
            break
          case "benign query":
            path += `?page=${benign}&agent_id=${benign}`
            break
        }
        const reply = await send(route, path, raw === undefined ? {} : { raw })
        expect(reply.status, `${route.method} ${path.slice(0, 120)}: ${reply.text.slice(0, 200)}`).toBeLessThan(500)
        if (expected !== undefined) expectRefused(reply, expected, `${route.method} ${route.path} ${where}`)
        else if (reply.status === 422 && reply.body?.details?.issues) {
          // A schema may refuse a benign value, but never as hostile.
          for (const issue of reply.body.details.issues) expect(issue.message).not.toMatch(/U\+0000|surrogate|percent-encoding/)
        }
      }),
      { numRuns: 300 }
    )
  })
})

/** Reference: the problems of a parsed value, by plain recursion. */
const hazardous = (value: unknown, depth = 0): boolean => {
  const bad = (text: string) => text.includes("\u0000") || /\p{Surrogate}/u.test(text)
  if (typeof value === "string") return bad(value)
  if (typeof value !== "object" || value === null) return false
  if (depth >= MAX_JSON_DEPTH) return true
  return Object.entries(value).some(([key, inner]) => (!Array.isArray(value) && bad(key)) || hazardous(inner, depth + 1))
}

/** The same JSON with every non-ASCII UTF-16 unit written as a `\uXXXX` escape, as some clients send it. */
const asciiEscaped = (text: string) => text.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

describe("screen", () => {
  const unit = fc.constantFrom("a", "é", "\u0000", "\u0001", "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", '"', "\\", "u", "/", "\u2028")
  const text = fc.array(unit, { maxLength: 6 }).map((units) => units.join(""))
  const value = fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      text,
      fc.integer(),
      fc.constant(null),
      fc.array(tie("json"), { maxLength: 3 }),
      fc.dictionary(text, tie("json"), { maxKeys: 3 }),
      fc.integer({ min: 50, max: 80 }).map((levels) => JSON.parse(nested(levels)))
    )
  })).json

  it("property: the one-pass scan flags a body exactly when a recursive walk of the parsed value finds a problem", () => {
    fc.assert(
      fc.property(value, fc.boolean(), (v, escaped) => {
        const json = escaped ? asciiEscaped(JSON.stringify(v)) : JSON.stringify(v)
        // The reference walks what a JSON parser makes of the text, not the generated value.
        expect(jsonIssues(json) !== undefined).toBe(hazardous(JSON.parse(json)))
      }),
      { numRuns: 2000 }
    )
  })

  it("URLs without `%` are not looked at; clean encodings pass", () => {
    expect(urlIssues("/api/v1/actions?agent_id=x")).toBeUndefined()
    expect(urlIssues("/api/v1/actions/caf%C3%A9?q=%F0%9F%98%80+x&r=%2B")).toBeUndefined()
    expect(urlIssues("/a%00?b=%00&c=%ZZ&%C3=1")).toEqual([
      { path: "path", message: expect.stringContaining("U+0000") },
      { path: "query.b", message: expect.stringContaining("U+0000") },
      { path: "query.c", message: expect.stringContaining("percent-encoding") },
      { path: "query", message: expect.stringContaining("percent-encoding") }
    ])
  })
})
