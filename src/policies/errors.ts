/** Why a policy operation was refused: the area's one error, whose reasons are the wire's refusals (`protocol/policies.ts`). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import {
  AlreadyActive,
  ConditionsRequired,
  InvalidRegex,
  ModeLocked,
  ModelsRequired,
  NotActive,
  PolicyActive,
  PolicyNotFound,
  PolicyTextRequired,
  UnknownMode,
  UnknownModel
} from "../../protocol/policies.js"
import { Reasons } from "../platform/domain-error.js"

export { AlreadyActive, ConditionsRequired, InvalidRegex, ModeLocked, ModelsRequired, NotActive, PolicyActive, PolicyNotFound, PolicyTextRequired, UnknownMode, UnknownModel }

/** The reasons validation can give (create, update and replace answer them). */
export const InvalidPolicy = Schema.Union([UnknownMode, ModeLocked, ConditionsRequired, InvalidRegex, PolicyTextRequired, ModelsRequired, UnknownModel, InvalidInput])

export class PoliciesError extends Schema.TaggedError<PoliciesError>()("PoliciesError", {
  reason: Reasons([...InvalidPolicy.members, PolicyNotFound, PolicyActive, AlreadyActive, NotActive])
}) {}

export const refuse = (reason: PoliciesError["reason"]) => Effect.fail(new PoliciesError({ reason }))
