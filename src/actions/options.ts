/** Options of authorize and notarize for in-process callers (the LLM gateway); the HTTP routes never set them. */

/** What an in-process caller (the LLM gateway) adds to an authorize request. */
export interface AuthorizeOptions {
  /** What the policies see as `context` in place of the stored `input.context` (text evaluated, never stored). */
  readonly policyContext?: Record<string, unknown>
}

/** What an in-process caller (the LLM gateway) adds to a notarization. */
export interface NotarizeOptions {
  /** The receipt's id, already told to the client. */
  readonly receiptUuid?: string
  /** The outcome details are the caller's own metadata, not the agent's output: no output policy applies. */
  readonly skipOutputScan?: boolean
}
