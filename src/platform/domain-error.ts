/**
 * What every area's domain error carries. Each area has one error class with a `reason` union
 * (`src/<area>/errors.ts`); each reason names its contract code and says what happened. Nothing
 * here knows HTTP: the handlers map reasons to wire errors with `answer` (`wire-errors.ts`).
 */
import * as Schema from "effect/Schema"

export interface Reason {
  readonly _tag: string
  /** The contract's error code, e.g. `NOT_FOUND`. */
  readonly code: string
  readonly message: string
  readonly details?: Record<string, unknown> | undefined
}

export interface Issue {
  readonly path: string
  readonly message: string
}

const Issues = Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))

/** Input the schema let through but the domain refuses (the contract's VALIDATION_ERROR). */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", { issues: Issues }) {
  readonly code = "VALIDATION_ERROR"
  override readonly message = this.issues.length === 1 ? `${this.issues[0]!.path}: ${this.issues[0]!.message}` : `${this.issues.length} validation issues`
  readonly details = { issues: this.issues }
  static one(path: string, message: string) {
    return new InvalidInput({ issues: [{ path, message }] })
  }
}

/** An agent slug that is not registered, or not the caller's organization's (agents, DIDs, credentials alike). */
export class AgentNotFound extends Schema.TaggedError<AgentNotFound>()("AgentNotFound", { agent_slug: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `Agent ${this.agent_slug} not found`
  readonly details = { agent_slug: this.agent_slug }
}
