/** Why a DID operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgentNotFound, InvalidInput } from "../platform/domain-error.js"

/** The DID has no document we could fetch and read (absent, unreachable, not JSON, another id). */
export class DidNotResolved extends Schema.TaggedError<DidNotResolved>()("DidNotResolved", { did: Schema.String, why: Schema.String }) {
  readonly code = "NOT_FOUND"
  override readonly message = `${this.did} could not be resolved: ${this.why}`
  readonly details = { did: this.did }
}

export class DidsError extends Schema.TaggedError<DidsError>()("DidsError", {
  reason: Schema.Union([AgentNotFound, DidNotResolved, InvalidInput])
}) {}

export { AgentNotFound }

export const refuse = (reason: DidsError["reason"]) => Effect.fail(new DidsError({ reason }))
