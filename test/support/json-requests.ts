/** The request side the local model fakes share: a whole body read and parsed as JSON (null when it is not), with its path. */
import type { IncomingMessage, ServerResponse } from "node:http"

export interface JsonRequest {
  /** The URL's path, without the query. */
  readonly path: string
  readonly body: any
}

/** A `createServer` listener that reads each request's body first, then hands it on parsed. */
export const onJsonRequest =
  (handle: (request: IncomingMessage, response: ServerResponse, received: JsonRequest) => void) => (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      let body: any = null
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        // Not JSON: the fake sees null.
      }
      handle(request, response, { path: (request.url ?? "/").split("?")[0]!, body })
    })
  }

/** Answers JSON, unless the client has gone. */
export const sendJson = (response: ServerResponse, status: number, payload: unknown) => {
  if (response.destroyed) return
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(payload))
}
