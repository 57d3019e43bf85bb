/** Why an accounts operation (registration, login, team, keys, plans) was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  EmailTaken,
  InvalidCredentials,
  InviteNotFound,
  KeyNotFound,
  MemberNotFound,
  NotKeyCreator,
  OrganizationNotFound,
  OwnerLeaving,
  OwnerOnly,
  OwnerRoleChange,
  ScopesBeyondKey,
  SsoRequired,
  TargetNotAdmin
} from "../../protocol/accounts.js"
import { InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export {
  EmailTaken,
  InvalidCredentials,
  InviteNotFound,
  KeyNotFound,
  MemberNotFound,
  NotKeyCreator,
  OrganizationNotFound,
  OwnerLeaving,
  OwnerOnly,
  OwnerRoleChange,
  ScopesBeyondKey,
  SsoRequired,
  TargetNotAdmin
}

export class AccountsError extends Schema.TaggedError<AccountsError>()("AccountsError", {
  reason: Reasons([EmailTaken, InviteNotFound, InvalidCredentials, SsoRequired, MemberNotFound, OwnerRoleChange, OwnerLeaving, OwnerOnly, TargetNotAdmin, ScopesBeyondKey, KeyNotFound, NotKeyCreator, OrganizationNotFound, InvalidInput])
}) {}

export const refuse = (reason: AccountsError["reason"]) => Effect.fail(new AccountsError({ reason }))
