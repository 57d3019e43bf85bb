/** Why an evidence or discovery request was refused: the area's one error, whose reasons are the wire's refusals (protocol/evidence.ts). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import {
  ChainActionNotFound,
  CrossOrgActions,
  EmptyActionList,
  FutureTimestamp,
  MissingReason,
  PackageActionsNotFound,
  PackageNotFound
} from "../../protocol/evidence.js"
import { Reasons } from "../platform/domain-error.js"

export { ChainActionNotFound, CrossOrgActions, EmptyActionList, FutureTimestamp, MissingReason, PackageActionsNotFound, PackageNotFound }

export class EvidenceError extends Schema.TaggedError<EvidenceError>()("EvidenceError", {
  reason: Reasons([EmptyActionList, PackageActionsNotFound, CrossOrgActions, PackageNotFound, ChainActionNotFound, MissingReason, FutureTimestamp, InvalidInput])
}) {}

export const refuse = (reason: EvidenceError["reason"]) => Effect.fail(new EvidenceError({ reason }))
