/**
 * What every area's domain error carries. Each area has one error class with a `reason` union
 * (`src/<area>/errors.ts`); each reason is a refusal of the wire contract (`protocol/errors.ts`),
 * with its status and literal code, that the area's endpoints declare. The refusals shared by
 * several areas live in `protocol/errors.ts` and are re-exported here for the services.
 */
import * as Schema from "effect/Schema"

export { AgentNotFound, InvalidInput, type Issue } from "../../protocol/errors.js"

export interface Reason {
  readonly _tag: string
  /** The contract's error code, e.g. `NOT_FOUND`. */
  readonly code: string
  readonly message: string
  readonly details?: Record<string, unknown> | undefined
}

/**
 * The `reason` field of an area error: one of these refusal classes, kept as the instance given.
 * (A plain `Schema.Union` of the classes re-reads the reason by its fields, so two refusals with
 * the same code and fields would come out as the first of them.)
 */
export const Reasons = <const Members extends ReadonlyArray<new (...args: any) => { readonly _tag: string }>>(
  members: Members
): Schema.Codec<InstanceType<Members[number]>> =>
  Schema.Union(members.map((member) => Schema.instanceOf(member))) as unknown as Schema.Codec<InstanceType<Members[number]>>
