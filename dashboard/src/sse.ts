/**
 * Server-Sent Events over fetch: EventSource cannot POST or send an Authorization header, so the
 * case stream is read with a streaming reader and parsed here, per the WHATWG format: `field: value`
 * lines, comments (`:`), CR, LF or CRLF line ends, events dispatched on a blank line, and chunks that
 * split anywhere (inside a line, between CR and LF, inside a UTF-8 sequence).
 */

export interface SseEvent {
  readonly event: string
  readonly data: string
}

export class SseParser {
  private buffer = ""
  private type = ""
  private data: Array<string> = []
  private readonly decoder = new TextDecoder()

  /** Feeds bytes (or text); returns the events completed by them. */
  push(chunk: Uint8Array | string): Array<SseEvent> {
    this.buffer += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true })
    const events: Array<SseEvent> = []
    const lineEnd = /\r\n|\r|\n/g
    let start = 0
    for (let match = lineEnd.exec(this.buffer); match !== null; match = lineEnd.exec(this.buffer)) {
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (match[0] === "\r" && match.index === this.buffer.length - 1) break
      this.line(this.buffer.slice(start, match.index), events)
      start = lineEnd.lastIndex
    }
    this.buffer = this.buffer.slice(start)
    return events
  }

  private line(line: string, events: Array<SseEvent>) {
    if (line === "") {
      if (this.data.length > 0) events.push({ event: this.type === "" ? "message" : this.type, data: this.data.join("\n") })
      this.type = ""
      this.data = []
      return
    }
    if (line.startsWith(":")) return
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "event") this.type = value
    else if (field === "data") this.data.push(value)
  }
}
