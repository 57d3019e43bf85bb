/** What the whitelist asks of the organization's actor (implemented in `actors/org.ts`). */
import * as Context from "effect/Context"
import type { OrgSnapshotPort } from "../platform/org-snapshot.js"
import type { ParsedPattern } from "./patterns.js"
import type { WhitelistMode } from "./store.js"

export interface CompiledEntry {
  /** Undefined when the stored pattern no longer parses: the entry matches nothing. */
  readonly pattern: ParsedPattern | undefined
  readonly tls_fingerprint: string | null
}

/** An organization's mode and approved entries, patterns parsed. */
export interface WhitelistSnapshot {
  readonly mode: WhitelistMode
  readonly entries: ReadonlyArray<CompiledEntry>
}

/** The organization's whitelist as its OrgActor holds it. */
export class OrgWhitelist extends Context.Service<OrgWhitelist, OrgSnapshotPort<WhitelistSnapshot>>()("gateway/OrgWhitelist") {}
