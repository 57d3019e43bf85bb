/** Why a policy operation was refused. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { InvalidInput } from "../platform/domain-error.js"

const Issues = Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))

export class UnknownMode extends Schema.TaggedError<UnknownMode>()("UnknownMode", { mode: Schema.String, modes: Schema.Array(Schema.String) }) {
  readonly code = "INVALID_MODE"
  override readonly message = `mode must be one of ${this.modes.join(", ")}`
  readonly details = { mode: this.mode }
}

export class ModeLocked extends Schema.TaggedError<ModeLocked>()("ModeLocked", { mode: Schema.String }) {
  readonly code = "INVALID_MODE"
  override readonly message = "a policy's mode cannot be changed; create a new policy"
  readonly details = { mode: this.mode }
}

/** The compiler says which: no conditions at all, or an empty list. */
export class ConditionsRequired extends Schema.TaggedError<ConditionsRequired>()("ConditionsRequired", { message: Schema.String }) {
  readonly code = "CONDITIONS_REQUIRED"
}

/** Only regexes were wrong (any other issue makes it an InvalidInput). */
export class InvalidRegex extends Schema.TaggedError<InvalidRegex>()("InvalidRegex", { issues: Issues }) {
  readonly code = "INVALID_REGEX"
  override readonly message = this.issues[0]?.message ?? "invalid regex"
  readonly details = { issues: this.issues }
}

export class PolicyTextRequired extends Schema.TaggedError<PolicyTextRequired>()("PolicyTextRequired", { mode: Schema.String }) {
  readonly code = "POLICY_TEXT_REQUIRED"
  override readonly message = `${this.mode} policies need ai_prompt (policy text)`
}

export class ModelsRequired extends Schema.TaggedError<ModelsRequired>()("ModelsRequired", { mode: Schema.Literals(["ai", "consensus"]) }) {
  readonly code = "MODELS_REQUIRED"
  override readonly message = this.mode === "ai" ? "ai policies need one model in ai_models" : "consensus policies need at least 2 models in ai_models"
}

export class UnknownModel extends Schema.TaggedError<UnknownModel>()("UnknownModel", { models: Schema.Array(Schema.String) }) {
  readonly code = "INVALID_MODEL"
  override readonly message = `unsupported model id: ${this.models.join(", ")}`
  readonly details = { models: this.models }
}

export class PolicyNotFound extends Schema.TaggedError<PolicyNotFound>()("PolicyNotFound", { id: Schema.String }) {
  readonly code = "POLICY_NOT_FOUND"
  override readonly message = `Policy ${this.id} not found`
  readonly details = { policy_uuid: this.id }
}

export class PolicyActive extends Schema.TaggedError<PolicyActive>()("PolicyActive", { id: Schema.String }) {
  readonly code = "POLICY_ACTIVE"
  override readonly message = "Deactivate the policy before deleting it"
  readonly details = { policy_uuid: this.id }
}

export class AlreadyActive extends Schema.TaggedError<AlreadyActive>()("AlreadyActive", { id: Schema.String }) {
  readonly code = "ALREADY_ACTIVE"
  override readonly message = "The policy is already active"
  readonly details = { policy_uuid: this.id }
}

export class NotActive extends Schema.TaggedError<NotActive>()("NotActive", { id: Schema.String }) {
  readonly code = "NOT_ACTIVE"
  override readonly message = "The policy is not active"
  readonly details = { policy_uuid: this.id }
}

/** The reasons validation can give (create, update and replace answer them). */
export const InvalidPolicy = Schema.Union([UnknownMode, ModeLocked, ConditionsRequired, InvalidRegex, PolicyTextRequired, ModelsRequired, UnknownModel, InvalidInput])

export class PoliciesError extends Schema.TaggedError<PoliciesError>()("PoliciesError", {
  reason: Schema.Union([...InvalidPolicy.members, PolicyNotFound, PolicyActive, AlreadyActive, NotActive])
}) {}

export const refuse = (reason: PoliciesError["reason"]) => Effect.fail(new PoliciesError({ reason }))
