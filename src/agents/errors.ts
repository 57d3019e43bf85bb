/** Why an agent-registry operation was refused: the area's one error, whose reasons are the wire's refusals. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  AgentVersionExists,
  DecommissionedAgent,
  InvalidSlug,
  InvalidTransferSignature,
  SlugTaken,
  TargetOrgNotFound
} from "../../protocol/agents.js"
import { AgentNotFound, InvalidInput } from "../../protocol/errors.js"
import { Reasons } from "../platform/domain-error.js"

export { AgentNotFound, AgentVersionExists, DecommissionedAgent, InvalidSlug, InvalidTransferSignature, SlugTaken, TargetOrgNotFound }

export class AgentsError extends Schema.TaggedError<AgentsError>()("AgentsError", {
  reason: Reasons([AgentNotFound, InvalidSlug, SlugTaken, AgentVersionExists, DecommissionedAgent, InvalidTransferSignature, TargetOrgNotFound, InvalidInput])
}) {}

export const refuse = (reason: AgentsError["reason"]) => Effect.fail(new AgentsError({ reason }))
