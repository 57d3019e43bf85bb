/**
 * The outbound client as the configuration allows it: the policy (OUTBOUND_ALLOW_PRIVATE,
 * OUTBOUND_ALLOW_HTTP), parsed once with the configuration (`configLayer` provides it beside
 * `Config`), that every call to a remote address checks against. Areas take it from here rather
 * than reading the environment or parsing the settings again.
 */
import * as Context from "effect/Context"
import { type OutboundPolicy, outboundPolicyOfConfig } from "./policy.js"

export interface OutboundService {
  readonly policy: OutboundPolicy
}

export class Outbound extends Context.Service<Outbound, OutboundService>()("gateway/Outbound") {
  static readonly ofConfig = (config: { readonly outboundAllowPrivate: string | undefined; readonly outboundAllowHttp: boolean }) =>
    Outbound.of({ policy: outboundPolicyOfConfig(config) })
}
