/**
 * A `fetch` for libraries that take one (the AI SDK's providers): every request goes through
 * the outbound client, so its address checks, timeouts and size cap hold. Bodies are buffered
 * both ways (no streaming), which is what the gateway's model calls need.
 */
import { type OutboundRequestOptions, outboundRequest } from "./client.js"

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface OutboundFetchOptions extends Pick<OutboundRequestOptions, "policy" | "ca" | "timeoutMs" | "maxResponseBytes" | "lookup" | "keepAlive"> {}

const headersOf = (headers: RequestInit["headers"]): Record<string, string> => {
  const out: Record<string, string> = {}
  new Headers(headers).forEach((value, name) => {
    out[name] = value
  })
  return out
}

const bodyOf = async (body: RequestInit["body"]): Promise<string | Uint8Array | undefined> => {
  if (body === null || body === undefined) return undefined
  if (typeof body === "string" || body instanceof Uint8Array) return body
  return new Uint8Array(await new Response(body).arrayBuffer())
}

export const outboundFetch =
  (options: OutboundFetchOptions): FetchLike =>
  async (input, init) => {
    const request = input instanceof Request ? input : undefined
    const url = request?.url ?? (input instanceof URL ? input.href : (input as string))
    const method = init?.method ?? request?.method ?? "GET"
    const headers = headersOf(init?.headers ?? request?.headers)
    const body = init?.body !== undefined ? await bodyOf(init.body) : request?.body ? new Uint8Array(await request.arrayBuffer()) : undefined
    const signal = init?.signal ?? request?.signal ?? undefined
    const response = await outboundRequest(url, { ...options, method, headers, ...(body === undefined ? {} : { body }), ...(signal ? { signal } : {}) })
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(response.headers)) responseHeaders.set(name, value)
    const nullBody = response.status === 204 || response.status === 304 || method.toUpperCase() === "HEAD"
    return new Response(nullBody ? null : new Uint8Array(response.body), { status: response.status, headers: responseHeaders })
  }
