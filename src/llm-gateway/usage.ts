/**
 * Reads what a provider's answer says about itself — token usage and why it stopped — from a
 * JSON body or, chunk by chunk, from an SSE stream; and digests every byte that passes. The
 * answer itself is never kept (a stream's partial line is, up to a bound). Pure state machine.
 */
import { createHash, type Hash } from "node:crypto"

export interface AnswerFacts {
  readonly inputTokens: number | null
  readonly outputTokens: number | null
  readonly finishReason: string | null
  readonly responseSha256: string
  readonly responseBytes: number
}

/** A line longer than this is not an event worth reading (usage events are small). */
const MAX_LINE_BYTES = 256 * 1024

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
const numberOr = (value: unknown, fallback: number | null): number | null => (typeof value === "number" && Number.isFinite(value) ? value : fallback)

export class AnswerReader {
  private readonly hash: Hash = createHash("sha256")
  private bytes = 0
  private inputTokens: number | null = null
  private outputTokens: number | null = null
  private finishReason: string | null = null
  /** The SSE line still open at the end of the last chunk. */
  private partial = ""
  private skippingLine = false
  /** Non-SSE bodies, kept to be read once at the end (only when small enough to buffer anyway). */
  private readonly kept: Array<Buffer> = []
  private keptBytes = 0

  constructor(
    private readonly sse: boolean,
    /** Non-SSE bodies larger than this are digested but not read for usage. */
    private readonly keepUpTo: number
  ) {}

  add(chunk: Buffer): void {
    this.hash.update(chunk)
    this.bytes += chunk.byteLength
    if (this.sse) this.scan(chunk.toString("latin1"))
    else if (this.keptBytes + chunk.byteLength <= this.keepUpTo) {
      // Kept as given: the caller hands over chunks it owns (the transport's buffered copies).
      this.kept.push(chunk)
      this.keptBytes += chunk.byteLength
    }
  }

  finish(): AnswerFacts {
    if (!this.sse && this.keptBytes === this.bytes && this.bytes > 0) {
      try {
        this.read(JSON.parse(Buffer.concat(this.kept, this.keptBytes).toString("utf8")))
      } catch {
        // Not JSON: no usage to report.
      }
    }
    if (this.sse && this.partial !== "") this.line(this.partial)
    return {
      inputTokens: this.inputTokens,
      outputTokens: this.outputTokens,
      finishReason: this.finishReason,
      responseSha256: `sha256:${this.hash.digest("hex")}`,
      responseBytes: this.bytes
    }
  }

  /** SSE: reads complete `data:` lines; the text is latin1 so a split UTF-8 sequence does no harm (JSON syntax is ASCII). */
  private scan(text: string): void {
    let start = 0
    for (;;) {
      const end = text.indexOf("\n", start)
      if (end === -1) {
        if (!this.skippingLine) {
          this.partial += text.slice(start)
          if (this.partial.length > MAX_LINE_BYTES) {
            this.partial = ""
            this.skippingLine = true
          }
        }
        return
      }
      if (!this.skippingLine) this.line(this.partial + text.slice(start, end))
      this.partial = ""
      this.skippingLine = false
      start = end + 1
    }
  }

  private line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    if (!line.startsWith("data:")) return
    // Most events are content deltas: only the ones that may carry usage or a stop reason are parsed.
    if (!line.includes("usage") && !line.includes("finish_reason") && !line.includes("stop_reason") && !line.includes("\"status\"")) return
    try {
      this.read(JSON.parse(Buffer.from(line.slice(5).trim(), "latin1").toString("utf8")))
    } catch {
      // `[DONE]` or a line that is not JSON.
    }
  }

  /** One JSON object: a whole answer or one event, in OpenAI's or Anthropic's shape. */
  private read(value: unknown): void {
    if (!isRecord(value)) return
    // Anthropic `message_start` and the Responses API's `response.*` events wrap the answer.
    const inner = isRecord(value.message) ? value.message : isRecord(value.response) ? value.response : undefined
    if (inner !== undefined) this.read(inner)
    const usage = value.usage
    if (isRecord(usage)) {
      this.inputTokens = numberOr(usage.prompt_tokens, numberOr(usage.input_tokens, this.inputTokens))
      this.outputTokens = numberOr(usage.completion_tokens, numberOr(usage.output_tokens, this.outputTokens))
    }
    if (Array.isArray(value.choices)) {
      for (const choice of value.choices) {
        if (isRecord(choice) && typeof choice.finish_reason === "string") this.finishReason = choice.finish_reason
      }
    }
    if (typeof value.stop_reason === "string") this.finishReason = value.stop_reason
    const delta = value.delta
    if (isRecord(delta) && typeof delta.stop_reason === "string") this.finishReason = delta.stop_reason
    // Responses API: the answer's own status (`completed`, `incomplete`).
    if (value.object === "response" && typeof value.status === "string") this.finishReason = value.status
  }
}
