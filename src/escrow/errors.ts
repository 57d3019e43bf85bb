/** Why an escrow operation was refused: the area's one error, whose reasons are the wire's refusals (protocol/escrow.ts). */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../../protocol/errors.js"
import {
  AccountFrozen,
  DisputeAlreadyOpen,
  DisputeEvidenceNotFound,
  DisputeSignatureInvalid,
  EscrowAccountNotFound,
  EscrowAgentDecommissioned,
  EscrowAgentNotFound,
  InsufficientBalance,
  InvalidAmount,
  NoOpenDispute,
  UnsupportedCurrency
} from "../../protocol/escrow.js"
import { Reasons } from "../platform/domain-error.js"

export {
  AccountFrozen,
  DisputeAlreadyOpen,
  DisputeEvidenceNotFound,
  DisputeSignatureInvalid,
  EscrowAccountNotFound,
  EscrowAgentDecommissioned,
  EscrowAgentNotFound,
  InsufficientBalance,
  InvalidAmount,
  NoOpenDispute,
  UnsupportedCurrency
}

export class EscrowError extends Schema.TaggedError<EscrowError>()("EscrowError", {
  reason: Reasons([EscrowAccountNotFound, UnsupportedCurrency, EscrowAgentNotFound, EscrowAgentDecommissioned, InvalidAmount, AccountFrozen, InsufficientBalance, DisputeSignatureInvalid, DisputeAlreadyOpen, DisputeEvidenceNotFound, NoOpenDispute, InvalidInput])
}) {}

export const refuse = (reason: EscrowError["reason"]) => Effect.fail(new EscrowError({ reason }))
