/** Why a code review operation was refused: the area's one error, whose reasons are the wire's refusals (CONTRACT-sdk-beyond §7). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { RepositoryTaken } from "../../protocol/code-review.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { InvalidInput, RepositoryTaken }

export class CodeReviewError extends Schema.TaggedError<CodeReviewError>()("CodeReviewError", {
  reason: Reasons([InvalidInput, RepositoryTaken])
}) {}

export const refuse = (reason: CodeReviewError["reason"]) => Effect.fail(new CodeReviewError({ reason }))
