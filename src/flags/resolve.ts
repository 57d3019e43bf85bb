/**
 * Flag resolution for an organization (spec 002), first match wins:
 * 1. the organization is in `enabled_org_ids` → on;
 * 2. `enabled_global` → on when the organization's rollout bucket is below `rollout_percentage`;
 * 3. the flag is not stored → self-hosted: `ENABLE_<KEY>`; cloud: the flag's built-in default.
 * A stored flag that matches neither 1 nor 2 is off. Pure: the service feeds it the cached flags.
 */
import { createHash } from "node:crypto"
import * as Result from "effect/Result"
import type { DeploymentMode } from "../platform/config.js"
import { parseBoolean } from "../platform/config.js"

export interface StoredFlag {
  readonly key: string
  readonly enabledGlobal: boolean
  readonly rolloutPercentage: number
  readonly orgIds: ReadonlySet<string>
}

/** Flags the service reads itself, with their value when neither storage nor the environment says. */
export const BUILT_IN_DEFAULTS: Readonly<Record<string, boolean>> = {
  enable_output_filtering: true,
  // DORA module: on unless ENABLE_DORA (self-hosted) or a stored flag says otherwise (CONTRACT "DORA module").
  dora: true,
  slack_integration: true,
  teams_integration: true,
  // The LLM gateway (CONTRACT-sdk-beyond §6): on unless ENABLE_LLM_GATEWAY or a stored flag says otherwise.
  llm_gateway: true,
  // GitHub auto-merge (CONTRACT-sdk-beyond §7): off unless ENABLE_GITHUB_AUTO_MERGE or a stored flag says otherwise.
  github_auto_merge: false
}

/**
 * The organization's bucket in [0, 100): sha256 of `<key>:<org id>`, first 32 bits scaled. The flag key
 * salts it so each flag's first 10 % are not the same organizations; for one flag an organization always
 * lands on the same side, and raising the percentage only adds organizations.
 */
export const rolloutBucket = (key: string, orgUuid: string): number => {
  const digest = createHash("sha256").update(`${key}:${orgUuid}`).digest()
  return Math.floor((digest.readUInt32BE(0) * 100) / 2 ** 32)
}

export const inRollout = (key: string, orgUuid: string, percentage: number): boolean => rolloutBucket(key, orgUuid) < percentage

/** `ENABLE_<KEY>`; a key that already starts with `enable_` is also read without the doubled prefix (ENABLE_OUTPUT_FILTERING). */
export const environmentNames = (key: string): ReadonlyArray<string> => {
  const upper = key.toUpperCase()
  return upper.startsWith("ENABLE_") ? [`ENABLE_${upper}`, upper] : [`ENABLE_${upper}`]
}

/**
 * The environment's word on an absent flag, read as every yes/no setting is (`parseBoolean`;
 * `loadConfig` refused unreadable `ENABLE_*` values at start); unset falls back to the built-in
 * default (off for others).
 */
export const environmentValue = (key: string, environment: Readonly<Record<string, string | undefined>>): boolean => {
  for (const name of environmentNames(key)) {
    const value = environment[name]?.trim()
    if (value === undefined || value === "") continue
    const parsed = parseBoolean(name, value)
    if (Result.isSuccess(parsed)) return parsed.success
  }
  return BUILT_IN_DEFAULTS[key] ?? false
}

export interface ResolutionContext {
  readonly mode: DeploymentMode
  readonly environment: Readonly<Record<string, string | undefined>>
}

export const resolveFlag = (flag: StoredFlag | undefined, key: string, orgUuid: string, context: ResolutionContext): boolean => {
  if (flag !== undefined) {
    if (flag.orgIds.has(orgUuid)) return true
    if (flag.enabledGlobal) return inRollout(key, orgUuid, flag.rolloutPercentage)
    return false
  }
  return context.mode === "selfhosted" ? environmentValue(key, context.environment) : (BUILT_IN_DEFAULTS[key] ?? false)
}
