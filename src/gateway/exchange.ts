/**
 * One request as the transport holds it: what it knows of the request (`Source`, which the
 * app reads through `UwsRequest`) and the state of its answer (`Exchange`). Classes, not object
 * literals: V8 builds an instance of a class with a prototype getter in a few nanoseconds, while a
 * literal with an accessor and closures cost microseconds per request on the bench.
 */
import { getRandomValues } from "node:crypto"
import type * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import type { BodyClock } from "./body-clock.js"
import { emptyBody, type RequestSource } from "./request.js"
import type { HttpResponse } from "./uws.js"

const decoder = new TextDecoder()

const HEX: string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))
/** Random bytes drawn 4 KiB at a time: one CSPRNG call serves 256 request ids. */
const idPool = new Uint8Array(4096)
let idOffset = idPool.length

/** 128 random bits as 32 hex digits, like a UUID without its dashes and version bits. */
export const newRequestId = (): string => {
  if (idOffset === idPool.length) {
    getRandomValues(idPool)
    idOffset = 0
  }
  let id = "req_"
  for (let end = idOffset + 16; idOffset < end; idOffset++) id += HEX[idPool[idOffset]!]
  return id
}

/** What a request's exchange shares with the server that accepted it. */
export interface ServerState {
  readonly inFlight: Set<Exchange>
  readonly connections: { open: number; readonly cap: number }
}

/** What the transport knows about one request; its client address is read only when asked for. */
export class Source implements RequestSource {
  body: Uint8Array = emptyBody
  text: string | undefined = undefined
  route: string | undefined = undefined
  responseHeaders: Record<string, string> | undefined = undefined
  exchange: Exchange | undefined = undefined
  private address: string | undefined | null = null
  constructor(
    readonly requestId: string,
    readonly method: string,
    readonly url: string,
    readonly headers: Record<string, string>,
    readonly params: Record<string, string> | undefined
  ) {}

  /** Read when first asked for (a system call), and only while the response can still be used. */
  get remoteAddress(): string | undefined {
    if (this.address === null) {
      const exchange = this.exchange
      this.address = exchange === undefined || exchange.aborted || exchange.done ? undefined : decoder.decode(exchange.res.getRemoteAddressAsText()) || undefined
    }
    return this.address
  }
}

export class Exchange {
  aborted = false
  done = false
  fiber: Fiber.Fiber<void, unknown> | undefined = undefined
  /** The scope of a native route's request (the router's requests get theirs from HttpEffect). */
  scope: Scope.Closeable | undefined = undefined
  /** The request fiber has started and not yet exited. */
  running = false
  /** A 5xx written while the fiber ran: logged when the fiber exits, with its cause. */
  failed: { readonly status: number; readonly millis: number } | undefined = undefined
  /** Wakes a streaming writer waiting for `onWritable`. */
  writable: (() => void) | undefined = undefined
  /** The body's pace and deadline, while it streams. */
  clock: BodyClock | undefined = undefined
  private released = false
  constructor(
    readonly res: HttpResponse,
    readonly source: Source,
    readonly started: number,
    private readonly server: ServerState
  ) {}

  /** The request no longer counts against the connection cap. */
  release() {
    if (this.released) return
    this.released = true
    this.server.inFlight.delete(this)
    this.server.connections.open--
  }

  /** The client went away: stop the body clock and the fiber. */
  abort() {
    this.aborted = true
    this.clock?.stop()
    this.fiber?.interruptUnsafe()
    this.release()
  }
}

