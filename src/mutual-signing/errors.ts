/** Why a mutual-signing step was refused (spec 001: codes per endpoint, checked in the spec's order); the reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  DidNoVerificationMethod,
  DidUnsupportedKeyFormat,
  MutualSignAlreadyRequested,
  MutualSignDidMismatch,
  MutualSignExpired,
  MutualSignInvalidSignature,
  MutualSignNoAgent,
  MutualSignNoDidKey,
  MutualSignNotCompleted,
  MutualSignNotFound,
  MutualSignNotPending,
  MutualSignPayloadMismatch
} from "../../protocol/mutual-signing.js"
import { Reasons } from "../platform/domain-error.js"

export {
  DidNoVerificationMethod,
  DidUnsupportedKeyFormat,
  MutualSignAlreadyRequested,
  MutualSignDidMismatch,
  MutualSignExpired,
  MutualSignInvalidSignature,
  MutualSignNoAgent,
  MutualSignNoDidKey,
  MutualSignNotCompleted,
  MutualSignNotFound,
  MutualSignNotPending,
  MutualSignPayloadMismatch
}

export class MutualSignError extends Schema.TaggedError<MutualSignError>()("MutualSignError", {
  reason: Reasons([
    MutualSignNotFound,
    MutualSignNoAgent,
    MutualSignNoDidKey,
    MutualSignAlreadyRequested,
    MutualSignNotPending,
    MutualSignExpired,
    MutualSignDidMismatch,
    DidNoVerificationMethod,
    DidUnsupportedKeyFormat,
    MutualSignInvalidSignature,
    MutualSignPayloadMismatch,
    MutualSignNotCompleted
  ])
}) {}

export const refuse = (reason: MutualSignError["reason"]) => Effect.fail(new MutualSignError({ reason }))
