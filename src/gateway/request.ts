/**
 * `HttpServerRequest` over a uWS request whose body has already been read.
 *
 * uWS's `req` is only valid inside the synchronous handler, so everything the
 * app may ask for (method, url, headers, address) is copied out up front, and
 * the body is buffered (with its size cap enforced while it streams) before the
 * request fiber starts.
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Cookies from "effect/http/Cookies"
import * as Headers from "effect/http/Headers"
import * as IncomingMessage from "effect/http/HttpIncomingMessage"
import { HttpServerError, RequestParseError } from "effect/http/HttpServerError"
import * as Request from "effect/http/HttpServerRequest"
import * as Multipart from "effect/http/Multipart"
import * as UrlParams from "effect/http/UrlParams"
import * as Inspectable from "effect/Inspectable"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

const utf8 = new TextDecoder("utf-8", { fatal: true })
const empty = new Uint8Array(0)

/** What the transport knows about one request; shared by every `modify`d copy. */
export interface RequestSource {
  readonly requestId: string
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly remoteAddress: string | undefined
  body: Uint8Array
  /** The body decoded as UTF-8, when the transport already decoded it (JSON and form bodies it screened). */
  text?: string
  /** Path parameters read by a native route (compiled endpoints); unset for the catch-all. */
  readonly params?: Record<string, string>
  /** The route template the request matched (a native route's, or the router's via `RouteLabel`); unset for unmatched requests. */
  route?: string
  /** Headers the transport adds to whatever response is written (rate-limit state, set by middleware). */
  responseHeaders?: Record<string, string>
}

export class UwsRequest extends Inspectable.Class implements Request.HttpServerRequest {
  readonly [Request.TypeId]: typeof Request.TypeId = Request.TypeId
  readonly [IncomingMessage.TypeId]: typeof IncomingMessage.TypeId = IncomingMessage.TypeId

  constructor(
    readonly source: RequestSource,
    readonly url: string = source.url,
    private readonly headersOverride?: Headers.Headers,
    private readonly remoteAddressOverride?: Option.Option<string>,
    private readonly peerAddressOverride?: Option.Option<string>,
    readonly protocol: "http" | "https" | undefined = "http"
  ) {
    super()
  }

  get method(): string {
    return this.source.method
  }

  get originalUrl(): string {
    return this.source.url
  }

  private cachedHeaders: Headers.Headers | undefined
  get headers(): Headers.Headers {
    const headers = this.source.headers
    return (this.cachedHeaders ??= this.headersOverride ?? (Headers.isHeaders(headers) ? headers : Headers.fromInput(headers)))
  }

  private cachedCookies: Record<string, string> | undefined
  get cookies(): Record<string, string> {
    return (this.cachedCookies ??= Cookies.parseHeader(this.source.headers.cookie ?? ""))
  }

  get remoteAddress(): Option.Option<string> {
    return this.remoteAddressOverride ?? Option.fromNullishOr(this.source.remoteAddress)
  }

  get peerAddress(): Option.Option<string> {
    return this.peerAddressOverride ?? this.remoteAddress
  }

  private parseError(description: string, cause?: unknown): HttpServerError {
    return new HttpServerError({ reason: new RequestParseError({ request: this, description, cause }) })
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError> {
    return Effect.sync(() => {
      const body = this.source.body
      return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer
    })
  }

  get text(): Effect.Effect<string, HttpServerError> {
    return Effect.suspend(() => {
      try {
        return Effect.succeed(this.source.text ?? (this.source.body.byteLength === 0 ? "" : utf8.decode(this.source.body)))
      } catch (cause) {
        return Effect.fail(this.parseError("request body is not valid UTF-8", cause))
      }
    })
  }

  get json(): Effect.Effect<any, HttpServerError> {
    return Effect.flatMap(this.text, (text) => {
      try {
        return Effect.succeed(text === "" ? null : JSON.parse(text))
      } catch (cause) {
        return Effect.fail(this.parseError("request body is not valid JSON", cause))
      }
    })
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError> {
    return Effect.map(this.text, (text) => UrlParams.fromInput(new URLSearchParams(text)))
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError> {
    return Stream.suspend(() => (this.source.body.byteLength === 0 ? Stream.empty : Stream.make(this.source.body)))
  }

  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return Stream.pipeThroughChannel(
      Stream.mapError(this.stream, (cause) => new Multipart.MultipartError({ reason: "InternalError", cause } as any)),
      Multipart.makeChannel(this.source.headers)
    )
  }

  get multipart(): Effect.Effect<Multipart.Persisted, Multipart.MultipartError, any> {
    return Multipart.toPersisted(this.multipartStream) as Effect.Effect<
      Multipart.Persisted,
      Multipart.MultipartError,
      FileSystem.FileSystem
    >
  }

  get upgrade(): Effect.Effect<never, HttpServerError> {
    return Effect.fail(this.parseError("WebSocket upgrades are served natively by uWS at /api/v1/ws"))
  }

  upgradeWith(): Effect.Effect<never, HttpServerError> {
    return this.upgrade
  }

  modify(options: {
    readonly url?: string
    readonly headers?: Headers.Headers
    readonly remoteAddress?: Option.Option<string>
    readonly peerAddress?: Option.Option<string>
    readonly protocol?: "http" | "https"
  }): UwsRequest {
    return new UwsRequest(
      this.source,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      "remoteAddress" in options ? options.remoteAddress : this.remoteAddressOverride,
      options.peerAddress ?? this.peerAddressOverride,
      options.protocol ?? this.protocol
    )
  }

  override toJSON(): unknown {
    return { _id: "HttpServerRequest", method: this.method, url: this.url, requestId: this.source.requestId }
  }
}

export const emptyBody = empty

const headersPrototype = Object.getPrototypeOf(Headers.empty)

/**
 * An empty record that is already Effect's `Headers` (its prototype), for the transport to fill
 * with uWS's header names (lowercase already): the request hands it to the app without a copy.
 */
export const newHeaders = (): Record<string, string> => Object.create(headersPrototype)

/** The query of a request URL as the router gives it: repeated keys collect into arrays. */
const noQuery: Record<string, string | Array<string>> = Object.freeze(Object.create(null))

export const searchParamsOf = (url: string): Record<string, string | Array<string>> => {
  const mark = url.indexOf("?")
  if (mark === -1 || mark === url.length - 1) return noQuery
  const out: Record<string, string | Array<string>> = Object.create(null)
  for (const [key, value] of new URLSearchParams(url.slice(mark + 1))) {
    const entry = out[key]
    if (entry === undefined) out[key] = value
    else if (Array.isArray(entry)) entry.push(value)
    else out[key] = [entry, value]
  }
  return out
}

/** The body as UTF-8 text, or undefined when it is not valid UTF-8. */
export const decodeUtf8 = (body: Uint8Array): string | undefined => {
  try {
    return utf8.decode(body)
  } catch {
    return undefined
  }
}

/**
 * Adds headers to this request's eventual response, success or error, without
 * rebuilding the response (cheaper than `HttpServerResponse.setHeaders` on the hot path).
 */
export const addResponseHeaders = (request: Request.HttpServerRequest, headers: Record<string, string>): void => {
  const source = request.source as RequestSource | undefined
  if (source && "requestId" in source) source.responseHeaders = source.responseHeaders ? { ...source.responseHeaders, ...headers } : headers
}

/** The request id of the request being served. */
export const requestIdOf = (request: Request.HttpServerRequest): string =>
  (request.source as RequestSource | undefined)?.requestId ?? request.headers["x-request-id"] ?? "req_unknown"
