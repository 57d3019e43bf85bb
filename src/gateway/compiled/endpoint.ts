/**
 * One HttpApi endpoint compiled, once at startup, into the program its native route runs.
 *
 * It does what `HttpApiBuilder` does for the endpoint (decode params, headers, query and
 * payload with the endpoint's schemas, run its middleware and security, call the handler,
 * encode the success or the declared error, fall back to `Respondable`), with the same
 * messages and statuses, but:
 * - the services come from the fiber's context, which the transport builds once from the
 *   app's context (HttpApiBuilder merges the group's context into every request);
 * - path parameters come from uWS's router (`RequestSource.params`);
 * - steps that finish synchronously (decoders, cached credentials) are chained eagerly,
 *   without a fiber step each;
 * - a JSON success body is written by a serializer compiled from its schema (json.ts).
 *
 * Endpoints whose shape this does not cover (streamed or upgraded responses, bodies with
 * response headers, multipart or streamed payloads, raw handlers) run Effect's own route
 * program instead, still on their native route.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpRouter from "effect/http/HttpRouter"
import { HttpServerRequest, ParsedSearchParams } from "effect/http/HttpServerRequest"
import * as Respondable from "effect/http/HttpServerRespondable"
import * as Response from "effect/http/HttpServerResponse"
import * as UrlParams from "effect/http/UrlParams"
import { HttpApiBuilder, HttpApiError, HttpApiMiddleware, HttpApiSchema } from "effect/http-api"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import type { RequestSource } from "../request.js"
import { type AnyEndpoint, type AnyGroup, type HandlerRuntime, internals, type ResponseEncoding } from "./effect-internals.js"
import { compileJsonWriter, type JsonWriter } from "./json.js"
import { runOutcome, type SyncMiddleware, type SyncSecurity, syncMiddleware, syncSecurity } from "./sync-middleware.js"

const { HttpApiSchemaError } = HttpApiError

export interface CompiledEndpoint {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** The uWS pattern (the endpoint's path: only `:name` segments are parameters). */
  readonly pattern: string
  readonly paramNames: ReadonlyArray<string>
  /** Reads the request, its query and its params from the fiber's context. */
  readonly program: Effect.Effect<Response.HttpServerResponse, unknown, HttpServerRequest | ParsedSearchParams>
  /** True when the endpoint runs HttpApiBuilder's own route program (see above). */
  readonly delegated: boolean
}

type AnyEffect = Effect.Effect<any, any, any>

const methods = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"])

/** `/a/:b/c` → its parameter names; undefined when a segment is more than a plain `:name` (regexes, wildcards). */
const patternParams = (path: string): ReadonlyArray<string> | undefined => {
  const names: string[] = []
  for (const segment of path.split("/")) {
    if (segment.startsWith(":")) {
      if (!/^:\w+$/.test(segment)) return undefined
      names.push(segment.slice(1))
    } else if (/[:*(]/.test(segment)) return undefined
  }
  return names
}

const isStreamPayload = (endpoint: AnyEndpoint) => {
  for (const [, { encoding }] of endpoint.payload) if (encoding._tag === "Stream" || encoding._tag === "Multipart") return true
  return false
}

/** Success or error bodies this module does not encode itself. */
const needsBuilder = (schemas: ReadonlyArray<Schema.Top>) =>
  schemas.some(
    (schema) =>
      internals.isStreamSchema(schema) ||
      internals.isUpgrade(schema) ||
      HttpApiSchema.isWithHeaders(schema) ||
      internals.getWithHeadersAnnotation(schema.ast) !== undefined
  )

const normalizeMediaType = (contentType: string) => {
  const normalized = contentType.toLowerCase().trim()
  const index = normalized.indexOf(";")
  return index === -1 ? normalized : normalized.slice(0, index).trim()
}

const hasBody = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS" && method !== "TRACE"

const notJson = () => Effect.fail(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })))

interface BufferedPayload {
  readonly tag: "Json" | "FormUrlEncoded" | "Text" | "Uint8Array"
  readonly nullOnEmpty: boolean
  readonly decode: (input: unknown) => Effect.Effect<unknown, Schema.SchemaError>
}

const payloadDecoders = (endpoint: AnyEndpoint, options: SchemaAST.ParseOptions | undefined) => {
  const decoders = new Map<string, BufferedPayload>()
  for (const [contentType, { encoding, schemas }] of endpoint.payload) {
    const schema = Schema.Union(schemas as ReadonlyArray<Schema.Top>)
    decoders.set(contentType, {
      tag: encoding._tag as BufferedPayload["tag"],
      nullOnEmpty: (schemas as ReadonlyArray<Schema.Top>).some((s) => SchemaAST.isNull(SchemaAST.toEncoded(s.ast))),
      decode: Schema.decodeUnknownEffect(encoding._tag === "FormUrlEncoded" ? Schema.toCodecArrayFromSingle(schema) : schema, options) as any
    })
  }
  return decoders
}

/** The payload as the handler receives it, or the 415 response HttpApiBuilder gives an unknown content type. */
const decodePayload = (
  decoders: Map<string, BufferedPayload>,
  request: HttpServerRequest,
  query: () => Record<string, string | Array<string>>
): Effect.Effect<unknown, Schema.SchemaError> | Response.HttpServerResponse => {
  const withBody = hasBody(request.method)
  const contentType = withBody ? normalizeMediaType(request.headers["content-type"] ?? "application/json") : "application/x-www-form-urlencoded"
  const decoder = decoders.get(contentType)
  if (decoder === undefined) return Response.text(`Unsupported content-type: ${contentType}`, { status: 415 })
  const known = (request.source as RequestSource).text
  switch (decoder.tag) {
    case "Json": {
      const parse = (text: string) => {
        if (text === "") return decoder.decode(decoder.nullOnEmpty ? null : undefined)
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          return notJson()
        }
        return decoder.decode(json)
      }
      return known !== undefined ? parse(known) : Effect.flatMap(Effect.orDie(request.text), parse)
    }
    case "Text":
      return known !== undefined ? decoder.decode(known) : Effect.flatMap(Effect.orDie(request.text), decoder.decode)
    case "FormUrlEncoded":
      return withBody
        ? Effect.flatMap(Effect.map(Effect.orDie(request.urlParamsBody), UrlParams.toRecord), decoder.decode)
        : decoder.decode(query())
    case "Uint8Array":
      return Effect.flatMap(
        Effect.map(Effect.orDie(request.arrayBuffer), (buffer) => new Uint8Array(buffer)),
        decoder.decode
      )
  }
}

/** Builds the response for one declared body (success or error): its status and encoding. */
interface Member {
  readonly status: number
  readonly encode: (value: unknown) => Effect.Effect<unknown, Schema.SchemaError>
  readonly json: JsonWriter | undefined
  readonly encoding: ResponseEncoding
  readonly noContent: boolean
}

const makeMember = (schema: Schema.Top, status: number, options: SchemaAST.ParseOptions | undefined): Member => {
  const encoding = internals.getResponseEncodingSchema(schema)
  return {
    status,
    encode: Schema.encodeUnknownEffect(schema as Schema.Codec<unknown, unknown>, options) as any,
    json: encoding._tag === "Json" ? compileJsonWriter(schema) : undefined,
    encoding,
    noContent: internals.isNoContent(schema.ast)
  }
}

const unserializable = (value: unknown) =>
  new Schema.SchemaError(new SchemaIssue.InvalidValue({ expected: "a JSON-serializable response body" }, value))

const toResponse = (member: Member, encoded: unknown): Effect.Effect<Response.HttpServerResponse, Schema.SchemaError> => {
  const { status, encoding } = member
  switch (encoding._tag) {
    case "Json": {
      if (encoded === undefined || member.noContent) return Effect.succeed(Response.empty({ status }))
      try {
        return Effect.succeed(Response.text(JSON.stringify(encoded), { status, contentType: encoding.contentType }))
      } catch {
        return Effect.fail(unserializable(encoded))
      }
    }
    case "Text":
      return Effect.succeed(Response.text(encoded as string, { status, contentType: encoding.contentType }))
    case "Uint8Array":
      return Effect.succeed(Response.uint8Array(encoded as Uint8Array, { status, contentType: encoding.contentType }))
    case "FormUrlEncoded":
      return Effect.succeed(Response.urlParams(encoded as any, { status }).pipe(Response.setHeader("content-type", encoding.contentType)))
  }
}

/**
 * Encodes a value with the first member that accepts it, as a Union of the members does.
 * A JSON member with a compiled writer answers in one pass when the value fits it.
 */
const makeEncoder = (members: ReadonlyArray<Member>) => {
  const encodeWith = (index: number, value: unknown, first: Schema.SchemaError | undefined): Effect.Effect<Response.HttpServerResponse, Schema.SchemaError> => {
    const member = members[index]!
    if (member.json !== undefined && !member.noContent && value !== undefined) {
      const text = member.json(value)
      if (text !== undefined) return Effect.succeed(Response.text(text, { status: member.status, contentType: member.encoding.contentType }))
    }
    const encoded = member.encode(value)
    if (Exit.isExit(encoded) && Exit.isSuccess(encoded)) return toResponse(member, encoded.value)
    return Effect.matchEffect(encoded, {
      onFailure: (error) => (index + 1 === members.length ? Effect.fail(first ?? error) : encodeWith(index + 1, value, first ?? error)),
      onSuccess: (encodedValue) => toResponse(member, encodedValue)
    })
  }
  return (value: unknown) => encodeWith(0, value, undefined)
}

/** What HttpApiBuilder's `Schema.Never` error encoder fails with when an endpoint declares no errors. */
const noErrorSchema = (error: unknown) => Effect.fail(new Schema.SchemaError(new SchemaIssue.InvalidType(SchemaAST.never, error as any)))

class HandlerError {
  constructor(readonly error: unknown) {}
}

type Apply = (effect: AnyEffect, options: { readonly group: AnyGroup; readonly endpoint: AnyEndpoint }) => AnyEffect

const securityCache = new WeakMap<object, Apply>()

/** HttpApiBuilder's security middleware: each scheme in turn; the first that lets the request through wins. */
const securityMiddleware = (key: HttpApiMiddleware.AnyServiceSecurity, service: Record<string, any>) => {
  const cached = securityCache.get(service)
  if (cached !== undefined) return cached
  const schemes = Object.entries(key.security).map(([name, security]) => ({
    decode: HttpApiBuilder.securityDecode(security as any),
    middleware: service[name] as (effect: AnyEffect, options: any) => AnyEffect
  }))
  const apply = (handler: AnyEffect, options: { readonly group: AnyGroup; readonly endpoint: AnyEndpoint }): AnyEffect => {
    if (schemes.length === 0) return handler
    const wrapped = Effect.mapError(handler, (error) => new HandlerError(error))
    const attempt = (index: number, last: Result.Result<any, any> | undefined): AnyEffect => {
      if (index === schemes.length) return Effect.fromResult(last as Result.Result<unknown, unknown>)
      const { decode, middleware } = schemes[index]!
      return Effect.flatMap(
        Effect.result(Effect.flatMap(decode, (credential) => middleware(wrapped, { credential, endpoint: options.endpoint, group: options.group }))),
        (result) => {
          if (Result.isSuccess(result)) return Effect.succeed(result.success)
          if (result.failure instanceof HandlerError) return Effect.fail(result.failure.error)
          return attempt(index + 1, result)
        }
      )
    }
    return attempt(0, undefined)
  }
  const sync = withSyncPath(key, service, apply)
  securityCache.set(service, sync)
  return sync
}

/** RFC 9110 §11.1: the credential after a case-insensitive scheme and at least one space (as HttpApiBuilder reads it). */
const authorizationCredential = (authorization: string | undefined, scheme: string): string | undefined => {
  const length = scheme.length
  if (
    authorization === undefined ||
    authorization.length <= length ||
    authorization.charCodeAt(length) !== 32 ||
    authorization.slice(0, length).toLowerCase() !== scheme.toLowerCase()
  ) {
    return undefined
  }
  let start = length + 1
  while (authorization.charCodeAt(start) === 32) start++
  return start === authorization.length ? undefined : authorization.slice(start)
}

/**
 * A bearer scheme whose middleware has a synchronous path (sync-middleware.ts) tries it first;
 * the middleware's effect runs only when it declines. One scheme only: with several, the order
 * of attempts is HttpApiBuilder's and stays with the effect.
 */
const withSyncPath = (key: HttpApiMiddleware.AnyServiceSecurity, service: Record<string | symbol, any>, apply: Apply): Apply => {
  const checks = service[syncSecurity] as Record<string, SyncSecurity> | undefined
  const entries = Object.entries(key.security)
  if (checks === undefined || entries.length !== 1) return apply
  const [name, security] = entries[0]!
  const check = checks[name]
  if (check === undefined || (security as { _tag: string })._tag !== "Http") return apply
  const scheme = (security as { scheme: string }).scheme
  return (handler, options) => {
    const slow = apply(handler, options)
    return Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest)
      const credential = authorizationCredential(request.headers.authorization, scheme)
      const outcome = credential === undefined ? undefined : check(credential, request)
      return outcome === undefined ? slow : runOutcome(outcome, handler)
    })
  }
}

/** A plain middleware with a synchronous path: tried first, its effect only when it declines. */
const plainMiddleware = (service: Apply & { readonly [syncMiddleware]?: SyncMiddleware }): Apply => {
  const check = service[syncMiddleware]
  if (check === undefined) return service
  return (handler, options) => {
    const slow = service(handler, options)
    return Effect.withFiber((fiber) => {
      const outcome = check(Context.getUnsafe(fiber.context, HttpServerRequest))
      return outcome === undefined ? slow : runOutcome(outcome, handler)
    })
  }
}

const applyMiddleware = (group: AnyGroup, endpoint: AnyEndpoint, context: Context.Context<never>, handler: AnyEffect) => {
  const options = { group, endpoint }
  for (const key of endpoint.middlewares as Iterable<HttpApiMiddleware.AnyService>) {
    const service = Context.getUnsafe(context, key as any) as any
    const apply = HttpApiMiddleware.isSecurity(key) ? securityMiddleware(key, service) : plainMiddleware(service)
    handler = apply(handler, options)
  }
  return handler
}

/** The program HttpApiBuilder builds for the endpoint, with its route context given per request. */
const delegatedProgram = (route: HttpRouter.Route<any, any>) => {
  const handler = route.uninterruptible ? route.handler : Effect.interruptible(route.handler)
  return Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest)
    const params = (request.source as RequestSource).params ?? {}
    return Effect.provideService(handler, HttpRouter.RouteContext, { route, params })
  })
}

export const compileEndpoint = (
  api: { readonly annotations: Context.Context<never> },
  group: AnyGroup,
  runtime: HandlerRuntime,
  route: HttpRouter.Route<any, any> | undefined,
  context: Context.Context<never>
): CompiledEndpoint | undefined => {
  const endpoint = runtime.endpoint
  const paramNames = patternParams(endpoint.path)
  if (!methods.has(endpoint.method) || paramNames === undefined) return undefined
  const method = endpoint.method as CompiledEndpoint["method"]
  const successSchemas = internals.getSuccessSchemas(endpoint)
  const errorSchemas = internals.getErrorSchemas(endpoint)
  const delegate = runtime.isRaw || isStreamPayload(endpoint) || needsBuilder(successSchemas) || needsBuilder(errorSchemas)
  if (delegate) {
    if (route === undefined) return undefined
    return { method, pattern: endpoint.path, paramNames, program: delegatedProgram(route), delegated: true }
  }

  const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
  const options = internals.getSlotParseOptions(annotations)
  const decodeParams = endpoint.params && Schema.decodeUnknownEffect(endpoint.params as Schema.Codec<unknown, unknown>, options.params)
  const decodeHeaders = endpoint.headers && Schema.decodeUnknownEffect(endpoint.headers as Schema.Codec<unknown, unknown>, options.headers)
  const decodeQuery = endpoint.query && Schema.decodeUnknownEffect(Schema.toCodecArrayFromSingle(endpoint.query as Schema.Top) as Schema.Codec<unknown, unknown>, options.query)
  const payloads = endpoint.payload.size > 0 ? payloadDecoders(endpoint, options.payload) : undefined
  const encodeSuccess = makeEncoder(successSchemas.map((schema) => makeMember(schema, internals.getStatusSuccessSchema(schema), options.success)))
  const errorMembers = errorSchemas.map((schema) => makeMember(schema, internals.getStatusErrorSchema(schema), options.error))
  const encodeError = errorMembers.length === 0 ? undefined : makeEncoder(errorMembers)
  const handler = runtime.handler

  const core: AnyEffect = Effect.withFiber((fiber) => {
    const httpRequest = Context.getUnsafe(fiber.context, HttpServerRequest)
    const source = httpRequest.source as RequestSource
    const readQuery = () => Context.getUnsafe(fiber.context, ParsedSearchParams) as Record<string, string | Array<string>>
    const request: Record<string, unknown> = { request: httpRequest, endpoint, group }
    let steps: AnyEffect | undefined
    const step = (next: () => AnyEffect) => {
      steps = steps === undefined ? next() : Effect.flatMapEager(steps, next)
    }
    if (decodeParams) step(() => Effect.mapEager(HttpApiSchemaError.wrap("Params", decodeParams(source.params ?? {})), (value) => void (request.params = value)))
    if (decodeHeaders) step(() => Effect.mapEager(HttpApiSchemaError.wrap("Headers", decodeHeaders(httpRequest.headers)), (value) => void (request.headers = value)))
    if (decodeQuery) step(() => Effect.mapEager(HttpApiSchemaError.wrap("Query", decodeQuery(readQuery())), (value) => void (request.query = value)))
    let early: Response.HttpServerResponse | undefined
    if (payloads) {
      step(() => {
        const decoded = decodePayload(payloads, httpRequest, readQuery)
        if (Response.isHttpServerResponse(decoded)) {
          early = decoded
          return Effect.void
        }
        return Effect.mapEager(HttpApiSchemaError.wrap("Payload", decoded), (value) => void (request.payload = value))
      })
    }
    const respond = (): AnyEffect => {
      if (early !== undefined) return Effect.succeed(early)
      return Effect.flatMapEager(handler(request), (value) => {
        if (Response.isHttpServerResponse(value)) return Effect.succeed(value)
        return HttpApiSchemaError.wrap("Body", encodeSuccess(value))
      })
    }
    return steps === undefined ? respond() : Effect.flatMapEager(steps, respond)
  })

  const program = applyMiddleware(group, endpoint, context, core).pipe(
    Effect.withErrorReporting,
    Effect.catch((error: unknown) => {
      if (HttpApiSchemaError.is(error) || HttpApiError.HttpApiPayloadTooLarge.is(error)) return Effect.die(error)
      const encoded = encodeError === undefined ? noErrorSchema(error) : encodeError(error)
      return Effect.catch(encoded, (schemaError) => (Respondable.isRespondable(error) ? Respondable.toResponse(error) : Effect.die(schemaError)))
    })
  )
  return {
    method,
    pattern: endpoint.path,
    paramNames,
    program: runtime.uninterruptible ? program : Effect.interruptible(program),
    delegated: false
  }
}
