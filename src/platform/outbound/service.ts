/**
 * The outbound client as the configuration allows it: the policy (OUTBOUND_ALLOW_PRIVATE,
 * OUTBOUND_ALLOW_HTTP), parsed once from `Config`, that every call to a remote address checks
 * against. Areas take it from here rather than reading the environment.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Config } from "../config.js"
import { type OutboundPolicy, outboundPolicyOfConfig } from "./policy.js"

export interface OutboundService {
  readonly policy: OutboundPolicy
}

export class Outbound extends Context.Service<Outbound, OutboundService>()("gateway/Outbound") {
  static readonly layer = Layer.effect(Outbound)(Effect.map(Config, (config) => Outbound.of({ policy: outboundPolicyOfConfig(config) })))
}
