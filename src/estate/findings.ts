/**
 * A snapshot's findings from either form the wire takes: the spec's array, or the published SDKs'
 * map `{requirement: status | {status, evidence}}` taken in the order it was sent. JSON.parse
 * puts integer-like keys ("1", "42") first, so the order is read from the body text itself.
 */
import type { Finding, MappedFinding } from "../../protocol/estate.js"
import type { Issue } from "../platform/domain-error.js"

export type FindingsInput = ReadonlyArray<Finding> | Readonly<Record<string, MappedFinding>>

export interface StoredFinding {
  readonly requirement: string
  readonly status: Finding["status"]
  readonly evidence: string | null
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"])

/** A tiny scanner over text already known to be valid JSON. */
const scanner = (text: string) => {
  let at = 0
  const skipSpace = () => {
    while (at < text.length && WHITESPACE.has(text[at]!)) at++
  }
  const string = (): string => {
    const start = at
    at++
    while (text[at] !== '"') at += text[at] === "\\" ? 2 : 1
    at++
    return JSON.parse(text.slice(start, at)) as string
  }
  const value = (): void => {
    skipSpace()
    const first = text[at]
    if (first === '"') {
      string()
      return
    }
    if (first === "{" || first === "[") {
      let depth = 0
      do {
        const char = text[at]
        if (char === '"') {
          string()
          continue
        }
        if (char === "{" || char === "[") depth++
        else if (char === "}" || char === "]") depth--
        at++
      } while (depth > 0)
      return
    }
    while (at < text.length && !",}]".includes(text[at]!) && !WHITESPACE.has(text[at]!)) at++
  }
  /** The keys of the object at the cursor, each handed to `onKey` with the cursor on its value. */
  const object = (onKey: (key: string) => void) => {
    skipSpace()
    at++ // {
    skipSpace()
    if (text[at] === "}") {
      at++
      return
    }
    for (;;) {
      skipSpace()
      const key = string()
      skipSpace()
      at++ // :
      onKey(key)
      skipSpace()
      if (text[at++] === "}") return
    }
  }
  const peek = () => {
    skipSpace()
    return text[at]
  }
  return { object, value, peek }
}

/** The keys of the body's top-level `findings` object as sent (the last `findings`, as JSON.parse keeps), or undefined. */
export const findingKeysAsSent = (body: string): ReadonlyArray<string> | undefined => {
  try {
    const scan = scanner(body)
    if (scan.peek() !== "{") return undefined
    let keys: Array<string> | undefined
    scan.object((key) => {
      if (key !== "findings" || scan.peek() !== "{") return scan.value()
      const found: Array<string> = []
      scan.object((inner) => {
        found.push(inner)
        scan.value()
      })
      keys = found
    })
    return keys
  } catch {
    return undefined
  }
}

/** Each problem of a map's requirements (the keys), named `findings.<key>`. */
export const requirementIssues = (findings: FindingsInput): Array<Issue> =>
  Array.isArray(findings)
    ? []
    : Object.keys(findings).flatMap((key) =>
        key.length < 1 || key.length > 500 ? [{ path: `findings.${key}`, message: "a requirement is 1-500 characters" }] : []
      )

/**
 * The findings as stored: the array as given, or the map's entries in `keysAsSent` order (keys the
 * scan did not see, if any, follow in object order).
 */
export const normalizeFindings = (findings: FindingsInput, keysAsSent: ReadonlyArray<string> | undefined): Array<StoredFinding> => {
  if (Array.isArray(findings)) {
    return (findings as ReadonlyArray<Finding>).map((finding) => ({ requirement: finding.requirement, status: finding.status, evidence: finding.evidence ?? null }))
  }
  const map = findings as Readonly<Record<string, MappedFinding>>
  const order = [...new Set([...(keysAsSent ?? []).filter((key) => Object.hasOwn(map, key)), ...Object.keys(map)])]
  return order.map((requirement) => {
    const given = map[requirement]!
    return typeof given === "string"
      ? { requirement, status: given, evidence: null }
      : { requirement, status: given.status, evidence: given.evidence ?? null }
  })
}

/** What the snapshot says overall when the request does not: all pass → compliant, all fail → non_compliant, else partial. */
export const overallStatusOf = (findings: ReadonlyArray<Pick<StoredFinding, "status">>) =>
  findings.every((finding) => finding.status === "pass")
    ? ("compliant" as const)
    : findings.every((finding) => finding.status === "fail")
      ? ("non_compliant" as const)
      : ("partial" as const)
