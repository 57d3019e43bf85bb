/**
 * Why an actions operation was refused: the area's one error, whose reasons are the wire's
 * refusals (protocol/actions.ts). Reasons cross the AgentActor (they are schemas), so the
 * transition that refused in another process answers the same reason here.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  ActionNotFound,
  AgentDecommissioned,
  AlreadyCosigned,
  AlreadyResolved,
  ApprovalExpired,
  CodeNotFound,
  CredentialExpired,
  DuplicateRequest,
  EndpointNotWhitelisted,
  EndpointTlsMismatch,
  InvalidActionState,
  InvalidOutcome,
  NotAllowedToDecide,
  OutputScanViolation,
  ParentNotFound,
  PolicyDenied
} from "../../protocol/actions.js"
import { InvalidInput } from "../../protocol/errors.js"

export {
  ActionNotFound,
  AgentDecommissioned,
  AlreadyCosigned,
  AlreadyResolved,
  ApprovalExpired,
  CodeNotFound,
  CredentialExpired,
  DuplicateRequest,
  EndpointNotWhitelisted,
  EndpointTlsMismatch,
  InvalidActionState,
  InvalidOutcome,
  NotAllowedToDecide,
  OutputScanViolation,
  ParentNotFound,
  PolicyDenied
}

export class ActionsError extends Schema.TaggedError<ActionsError>()("ActionsError", {
  // A member takes a refusal its literal fields match (protocol/actions.ts): ApprovalExpired,
  // whose message is fixed, before AlreadyResolved, whose message is free.
  reason: Schema.Union([
    ActionNotFound,
    ParentNotFound,
    CodeNotFound,
    DuplicateRequest,
    EndpointNotWhitelisted,
    EndpointTlsMismatch,
    PolicyDenied,
    InvalidOutcome,
    AgentDecommissioned,
    InvalidActionState,
    OutputScanViolation,
    ApprovalExpired,
    AlreadyResolved,
    AlreadyCosigned,
    CredentialExpired,
    NotAllowedToDecide,
    InvalidInput
  ])
}) {}

export const refuse = (reason: ActionsError["reason"]) => Effect.fail(new ActionsError({ reason }))
