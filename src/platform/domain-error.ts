/**
 * What every area's domain error carries. Each area has one error class with a `reason` union
 * (`src/<area>/errors.ts`); each reason is a refusal of the wire contract (`protocol/errors.ts`),
 * with its status and literal code, that the area's endpoints declare. The refusals shared by
 * several areas live in `protocol/errors.ts` and are re-exported here for the services.
 */
export { AgentNotFound, InvalidInput, type Issue } from "../../protocol/errors.js"

export interface Reason {
  readonly _tag: string
  /** The contract's error code, e.g. `NOT_FOUND`. */
  readonly code: string
  readonly message: string
  readonly details?: Record<string, unknown> | undefined
}
