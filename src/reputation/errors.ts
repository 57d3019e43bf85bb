/** Why a reputation request was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { DidNoVerificationMethod, DidUnsupportedKeyFormat } from "../../protocol/mutual-signing.js"
import {
  AttestationInvalidSignature,
  AttestedActionNotFound,
  AttestedActionState,
  DuplicateAttestation,
  SelfAttestation
} from "../../protocol/reputation.js"
import { AgentNotFound, InvalidInput, Reasons } from "../platform/domain-error.js"

export {
  AgentNotFound,
  AttestationInvalidSignature,
  AttestedActionNotFound,
  AttestedActionState,
  DidNoVerificationMethod,
  DidUnsupportedKeyFormat,
  DuplicateAttestation,
  InvalidInput,
  SelfAttestation
}

export class ReputationError extends Schema.TaggedError<ReputationError>()("ReputationError", {
  reason: Reasons([
    AgentNotFound,
    InvalidInput,
    AttestedActionNotFound,
    AttestedActionState,
    SelfAttestation,
    DidNoVerificationMethod,
    DidUnsupportedKeyFormat,
    AttestationInvalidSignature,
    DuplicateAttestation
  ])
}) {}

export const refuse = (reason: ReputationError["reason"]) => Effect.fail(new ReputationError({ reason }))
