/**
 * Why authentication refused a credential: the area's one error, whose reasons are the wire's
 * refusals (`protocol/auth.ts`). The edge checks of `guards.ts` answer wire errors directly.
 */
import * as Schema from "effect/Schema"
import { CredentialsThrottled, InvalidCredential } from "../../protocol/auth.js"
import { Reasons } from "../platform/domain-error.js"

export { CredentialsThrottled, InvalidCredential }

export class AccessError extends Schema.TaggedError<AccessError>()("AccessError", { reason: Reasons([InvalidCredential, CredentialsThrottled]) }) {}
