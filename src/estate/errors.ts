/** Why an estate operation was refused (spec 001 "Estate (K)" codes): the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import {
  AlreadyDeceased,
  DeathCertificateNotFound,
  EmptyFindings,
  EstateAgentNotFound,
  InvalidSuccessionPolicy,
  NotDecommissioned,
  SuccessorNotFound,
  WillNotFound
} from "../../protocol/estate.js"
import { Reasons } from "../platform/domain-error.js"

export { AlreadyDeceased, DeathCertificateNotFound, EmptyFindings, EstateAgentNotFound, InvalidSuccessionPolicy, NotDecommissioned, SuccessorNotFound, WillNotFound }

export class EstateError extends Schema.TaggedError<EstateError>()("EstateError", {
  reason: Reasons([
    EstateAgentNotFound,
    SuccessorNotFound,
    InvalidSuccessionPolicy,
    WillNotFound,
    DeathCertificateNotFound,
    AlreadyDeceased,
    NotDecommissioned,
    EmptyFindings,
    InvalidInput
  ])
}) {}

export const refuse = (reason: EstateError["reason"]) => Effect.fail(new EstateError({ reason }))
