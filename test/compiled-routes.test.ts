/**
 * The compiled routes (src/gateway/compiled): every endpoint of the HttpApi is served by its
 * own uWS route, and answers exactly as HttpApiBuilder's router does. The router still serves
 * what uWS does not match, so the same request sent with one letter of its path
 * percent-encoded reaches the router instead, and both answers are compared.
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { GatewayApi } from "../protocol/api.js"
import type { AnyApi } from "../src/gateway/compiled/effect-internals.js"
import { internals, missingInternals } from "../src/gateway/compiled/effect-internals.js"
import { compileJsonWriter } from "../src/gateway/compiled/json.js"
import { CompiledRoutes } from "../src/gateway/compiled/routes.js"
import { call, registerOrg } from "./support/client.js"
import { useServer } from "./support/server.js"

const server = useServer({ RATE_LIMIT_PER_MINUTE: "100000" })

/** The same path with its first letter after `/api/v1/` percent-encoded: uWS does not match it, the router does. */
const viaRouter = (path: string) => {
  const index = path.search(/[a-z]/)
  return `${path.slice(0, index)}%${path.charCodeAt(index).toString(16)}${path.slice(index + 1)}`
}

const withoutRequestId = (body: unknown) => {
  if (typeof body !== "object" || body === null) return body
  const { request_id: _ignored, ...rest } = body as Record<string, unknown>
  return rest
}

const nativeStarted = async () => (await server.run(CompiledRoutes)).started()

/** Both answers to one request: the native route's and the router's (each checked to have taken its path). */
const both = async (method: string, path: string, options: Parameters<typeof call>[3] = {}) => {
  const before = await nativeStarted()
  const native = await call(server.url, method, path, options)
  const afterNative = await nativeStarted()
  const routed = await call(server.url, method, viaRouter(path), options)
  expect(afterNative).toBe(before + 1)
  expect(await nativeStarted()).toBe(afterNative)
  return { native, routed }
}

const expectSameAnswer = async (method: string, path: string, options: Parameters<typeof call>[3] = {}) => {
  const { native, routed } = await both(method, path, options)
  expect(native.status).toBe(routed.status)
  expect(withoutRequestId(native.body)).toEqual(withoutRequestId(routed.body))
  expect(native.headers.get("content-type")).toBe(routed.headers.get("content-type"))
  expect(native.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/)
  if (typeof native.body === "object" && native.body !== null && !Array.isArray(native.body)) {
    expect(native.body.request_id).toBe(native.headers.get("x-request-id"))
  }
  return native
}

describe("compiled routes", () => {
  it("relies only on Effect internals that are present", () => {
    expect(missingInternals()).toEqual([])
  })

  it("compiles every endpoint of the API: none is left to the catch-all", async () => {
    const { compiled, delegated, skipped } = await server.run(CompiledRoutes)
    expect(skipped).toEqual([])
    const declared = Object.values((GatewayApi as unknown as AnyApi).groups).reduce((sum, group) => sum + Object.keys(group.endpoints).length, 0)
    expect(compiled + delegated).toBe(declared)
    // Most run the compiled program; only streamed, multipart and header-carrying bodies use HttpApiBuilder's.
    expect(compiled).toBeGreaterThan(declared * 0.9)
  })

  it("answers as the router does: success, missing and refused credentials", async () => {
    const org = await registerOrg(server.url)
    const native = await expectSameAnswer("GET", "/api/v1/auth/whoami", { token: org.key })
    expect(native.status).toBe(200)
    expect(native.body.org_uuid).toBe(org.orgUuid)
    expect(native.headers.get("ratelimit-policy")).toContain("per-key")
    expect((await expectSameAnswer("GET", "/api/v1/auth/whoami")).status).toBe(401)
    expect((await expectSameAnswer("GET", "/api/v1/auth/whoami", { token: "ak_live_notakey" })).status).toBe(401)
    expect((await expectSameAnswer("GET", "/health")).status).toBe(200)
  })

  it("answers as the router does: path, query and body validation, unknown media types, missing rows", async () => {
    const org = await registerOrg(server.url)
    const token = org.key
    expect((await expectSameAnswer("GET", "/api/v1/actions/00000000-0000-4000-8000-000000000000", { token })).status).toBe(404)
    expect((await expectSameAnswer("GET", "/api/v1/actions/not-a-uuid", { token })).status).toBeGreaterThanOrEqual(400)
    expect((await expectSameAnswer("GET", "/api/v1/actions?page=abc", { token })).status).toBe(422)
    expect((await expectSameAnswer("GET", "/api/v1/actions?per_page=2", { token })).status).toBe(200)
    expect((await expectSameAnswer("POST", "/api/v1/policies", { token, body: { name: 42 } })).status).toBe(422)
    expect((await expectSameAnswer("POST", "/api/v1/policies", { token, raw: "{not json" })).status).toBe(400)
    const unsupported = await expectSameAnswer("POST", "/api/v1/policies", { token, raw: "name=x", headers: { "content-type": "text/csv" } })
    expect(unsupported.status).toBe(415)
  })

  it("leaves to the router what uWS would read differently (encoded parameters, HEAD)", async () => {
    const org = await registerOrg(server.url)
    const before = await nativeStarted()
    const encoded = await call(server.url, "GET", "/api/v1/actions/00000000%2D0000-4000-8000-000000000000", { token: org.key })
    expect(encoded.status).toBe(404)
    const head = await fetch(`${server.url}/health`, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(await nativeStarted()).toBe(before)
  })
})

describe("compiled JSON writers", () => {
  /** Every success and error body of the API whose shape gets a writer. */
  const bodies = Object.values((GatewayApi as unknown as AnyApi).groups).flatMap((group) =>
    Object.values(group.endpoints).flatMap((endpoint) => [...internals.getSuccessSchemas(endpoint), ...internals.getErrorSchemas(endpoint)])
  )

  it("write what encoding with the schema and JSON.stringify would, for values generated from each schema", async () => {
    let compared = 0
    let written = 0
    for (const schema of bodies) {
      const writer = compileJsonWriter(schema)
      if (writer === undefined) continue
      const samples = await Effect.runPromise(
        Effect.orElseSucceed(Arbitrary.sampleEffect(Arbitrary.schema(schema as Schema.Codec<unknown, unknown>), { count: 8, seed: 7 }), () => [])
      )
      const encode = Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown>)
      for (const value of samples) {
        let expected: string | undefined
        try {
          expected = JSON.stringify(encode(value))
        } catch {
          continue
        }
        const text = writer(value)
        compared++
        if (text === undefined) continue
        written++
        expect(text).toBe(expected)
      }
    }
    expect(compared).toBeGreaterThan(100)
    // The writer declines only values it cannot place; generated values are well-formed.
    expect(written).toBeGreaterThan(compared * 0.9)
  })

  it("never writes a key the schema does not declare, and declines a value of the wrong shape", () => {
    const schema = Schema.Struct({
      id: Schema.String,
      count: Schema.Number,
      note: Schema.optional(Schema.String),
      tags: Schema.Array(Schema.String),
      owner: Schema.NullOr(Schema.Struct({ name: Schema.String }))
    })
    const writer = compileJsonWriter(schema)!
    expect(writer({ id: "a", count: 1, tags: ["x"], owner: null, secret: "never" })).toBe('{"id":"a","count":1,"tags":["x"],"owner":null}')
    expect(writer({ id: "a", count: 1, note: "n", tags: [], owner: { name: "o", password: "p" } })).toBe(
      '{"id":"a","count":1,"note":"n","tags":[],"owner":{"name":"o"}}'
    )
    expect(writer({ id: "a", count: "1", tags: [], owner: null })).toBeUndefined()
    expect(writer({ id: "a", tags: [], owner: null })).toBeUndefined()
    expect(writer({ id: 'quote " and \u2028', count: Number.NaN, tags: [], owner: null })).toBe(
      JSON.stringify({ id: 'quote " and \u2028', count: Number.NaN, tags: [], owner: null })
    )
  })
})
