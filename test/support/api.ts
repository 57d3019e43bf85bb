/**
 * The gateway's typed client (HttpApiClient over `GatewayApi`) for tests
 * written as Effects: requests are encoded from the contract and successful
 * answers decoded by it, so a test fails on any drift from `protocol/`.
 *
 * Answers a test expects to be errors are read with `responseMode:
 * "response-only"` and `answer`, which gives the status and the JSON body as
 * sent, whatever errors the endpoint declares.
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import { HttpApiClient } from "effect/http-api"
import { GatewayApi } from "../../protocol/api.js"
import { addMember, type CallOptions, call, type Org, type Reply, uniqueEmail } from "./client.js"
import { Gateway } from "./server.js"

export type GatewayClient = HttpApiClient.ForApi<typeof GatewayApi>

/** Clients already built, by base URL and credential: building one walks the whole contract. */
const built = new Map<string, GatewayClient>()

const cachedClient = (key: string, make: Effect.Effect<GatewayClient>): Effect.Effect<GatewayClient> =>
  Effect.suspend(() => {
    const cached = built.get(key)
    return cached !== undefined ? Effect.succeed(cached) : Effect.tap(make, (client) => Effect.sync(() => built.set(key, client)))
  })

/** The typed client of the gateway at `baseUrl`; `token` (API key or dashboard JWT) goes as Bearer. */
export const clientAt = (baseUrl: string, token?: string): Effect.Effect<GatewayClient> =>
  cachedClient(
    `${baseUrl} bearer ${token ?? ""}`,
    HttpApiClient.make(GatewayApi, {
      baseUrl,
      transformClient: token === undefined ? undefined : HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

/** The typed client of the gateway at `baseUrl` sending `X-Admin-Key: key`, the platform administration's credential. */
export const adminClientAt = (baseUrl: string, key = "test-admin-key"): Effect.Effect<GatewayClient> =>
  cachedClient(
    `${baseUrl} admin ${key}`,
    HttpApiClient.make(GatewayApi, { baseUrl, transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-admin-key", key)) }).pipe(
      Effect.provide(FetchHttpClient.layer)
    )
  )

/** The administration's typed client of the running test server. */
export const adminClient = (key?: string): Effect.Effect<GatewayClient, never, Gateway> => Effect.flatMap(Gateway, (server) => adminClientAt(server.url, key))

/**
 * A request the contract cannot express (a malformed body, keys outside it, an unusual header, a
 * non-JSON answer) to the running test server, answered as sent.
 */
export const raw = (method: string, path: string, options: CallOptions = {}): Effect.Effect<Reply, never, Gateway> =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => call(server.url, method, path, options)))

/** The typed client of the running test server (`Gateway`), as `token` or anonymous. */
export const client = (token?: string): Effect.Effect<GatewayClient, never, Gateway> =>
  Effect.flatMap(Gateway, (server) => clientAt(server.url, token))

/** Status and JSON body (undefined when empty) of an answer read with `responseMode: "response-only"`. */
export const answer = <E, R>(
  response: Effect.Effect<HttpClientResponse.HttpClientResponse, E, R>
): Effect.Effect<{ readonly status: number; readonly body: any }, E | unknown, R> =>
  Effect.flatMap(response, (reply) =>
    Effect.map(reply.text, (text) => ({ status: reply.status, body: text === "" ? undefined : JSON.parse(text) }))
  )

/** Registers a new organization on the test server, as `registerOrg` does. */
export const register = (name = "Acme"): Effect.Effect<Org, unknown, Gateway> =>
  Effect.gen(function* () {
    const anonymous = yield* client()
    const email = uniqueEmail("owner")
    const password = "correct horse battery staple"
    const reply = yield* anonymous.auth.register({ payload: { email, password, org_name: name } })
    return {
      orgUuid: reply.org_uuid,
      userUuid: reply.user_uuid,
      email,
      password,
      token: reply.token,
      key: reply.api_key.key,
      keyId: reply.api_key.id
    }
  })

/** Invites and registers a teammate of `owner` with `role` on the test server, as `addMember` does. */
export const member = (owner: Org, role: "admin" | "member") =>
  Effect.flatMap(Gateway, (server) => Effect.promise(() => addMember(server.url, owner, role)))
