/**
 * Input no handler can store, refused at the edge before routing: Postgres text
 * and jsonb cannot hold U+0000, lone surrogates are not valid UTF-8, and a few
 * thousand levels of nesting overflow the stack of `JSON.stringify` when a value
 * is written as jsonb. Such requests are 422 VALIDATION_ERROR with the
 * contract's issue list; 64 levels is far beyond any real `context`.
 *
 * The checks are cheap when there is nothing to find: the URL and form bodies are
 * looked at only when they hold a `%`; a JSON body with no `\u` escape and few
 * brackets is passed on after two native searches, else scanned once without
 * parsing, and parsed (to name the fields) only when the scan finds something.
 */

export interface Issue {
  readonly path: string
  readonly message: string
}

/** Arrays and objects nested deeper than this are refused. */
export const MAX_JSON_DEPTH = 64
/** At most this many issues are listed. */
export const MAX_ISSUES = 20

const NUL = "must not contain NUL (U+0000)"
const SURROGATE = "must not contain unpaired surrogates (not valid Unicode)"
const ENCODING = "malformed percent-encoding or not UTF-8"
const surrogate = /\p{Surrogate}/u

const stringProblem = (text: string): string | undefined => {
  if (text.includes("\u0000")) return NUL
  if (surrogate.test(text)) return SURROGATE
  return undefined
}

const decode = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

const componentProblem = (raw: string): string | undefined => {
  if (!raw.includes("%")) return undefined
  const decoded = decode(raw)
  if (decoded === undefined) return ENCODING
  return decoded.includes("\u0000") ? NUL : undefined
}

/** Issues of `name=value&…` pairs (a query string or a form body), named `<section>.<name>`. */
const pairIssues = (text: string, section: string, issues: Issue[]): void => {
  for (const pair of text.split("&")) {
    if (issues.length >= MAX_ISSUES) return
    if (!pair.includes("%")) continue
    const eq = pair.indexOf("=")
    const rawName = (eq === -1 ? pair : pair.slice(0, eq)).replaceAll("+", " ")
    const nameProblem = componentProblem(rawName)
    if (nameProblem !== undefined) {
      issues.push({ path: section, message: `parameter name ${nameProblem}` })
      continue
    }
    const valueProblem = eq === -1 ? undefined : componentProblem(pair.slice(eq + 1).replaceAll("+", " "))
    if (valueProblem !== undefined) issues.push({ path: `${section}.${decode(rawName)}`, message: valueProblem })
  }
}

/** Issues of the path (`path`) and of query names and values (`query`, `query.<name>`). */
export const urlIssues = (url: string): Issue[] | undefined => {
  if (!url.includes("%")) return undefined
  const issues: Issue[] = []
  const q = url.indexOf("?")
  const pathProblem = componentProblem(q === -1 ? url : url.slice(0, q))
  if (pathProblem !== undefined) issues.push({ path: "path", message: pathProblem })
  if (q !== -1) pairIssues(url.slice(q + 1), "query", issues)
  return issues.length === 0 ? undefined : issues
}

/** Issues of a form body (`application/x-www-form-urlencoded`, the approval page), named `body.<name>`. */
export const formIssues = (text: string): Issue[] | undefined => {
  if (!text.includes("%")) return undefined
  const issues: Issue[] = []
  pairIssues(text, "body", issues)
  return issues.length === 0 ? undefined : issues
}

const hexValue = (code: number): number => {
  if (code >= 48 && code <= 57) return code - 48
  const lower = code | 0x20
  return lower >= 97 && lower <= 102 ? lower - 87 : -1
}

/** The code unit of the four hex digits at `at`, or -1. */
const hex4 = (text: string, at: number): number => {
  let unit = 0
  for (let k = at; k < at + 4; k++) {
    const digit = hexValue(text.charCodeAt(k))
    if (digit === -1) return -1
    unit = unit * 16 + digit
  }
  return unit
}

/**
 * One pass over JSON text: true when nesting exceeds the cap or a string (key or
 * value) holds `\u0000` or an unpaired surrogate escape. Raw NULs and raw lone
 * surrogates cannot reach here (the first is not JSON, the second not UTF-8).
 * Malformed JSON may pass; the app refuses it as INVALID_JSON.
 */
const needsWalk = (text: string): boolean => {
  let depth = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x22) break
        if (d !== 0x5c /* \ */) continue
        i++
        if (text.charCodeAt(i) !== 0x75 /* u */) continue
        const unit = hex4(text, i + 1)
        if (unit === 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return true
        if (unit >= 0xd800 && unit <= 0xdbff) {
          const low = text.charCodeAt(i + 5) === 0x5c && text.charCodeAt(i + 6) === 0x75 ? hex4(text, i + 7) : -1
          if (low < 0xdc00 || low > 0xdfff) return true
          i += 6
        }
        i += 4
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > MAX_JSON_DEPTH) return true
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return false
}

const printable = (key: string) => key.replaceAll("\u0000", "\uFFFD").replace(/\p{Surrogate}/gu, "\uFFFD")
const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`)

/** Iterative (an explicit stack), so no nesting can overflow the call stack. */
const walk = (root: unknown): Issue[] => {
  const issues: Issue[] = []
  const stack: Array<{ value: unknown; path: string; depth: number; key?: string }> = [{ value: root, path: "", depth: 0 }]
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const { value, path, depth, key } = stack.pop()!
    const at = path === "" ? "body" : path
    if (key !== undefined) issues.push({ path: at, message: `field name ${key}` })
    if (typeof value === "string") {
      const problem = stringProblem(value)
      if (problem !== undefined) issues.push({ path: at, message: problem })
    } else if (typeof value === "object" && value !== null) {
      if (depth >= MAX_JSON_DEPTH) {
        issues.push({ path: at, message: `nested deeper than ${MAX_JSON_DEPTH} levels` })
      } else if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: join(path, String(i)), depth: depth + 1 })
      } else {
        const keys = Object.keys(value)
        for (let i = keys.length - 1; i >= 0; i--) {
          const name = keys[i]!
          const problem = stringProblem(name)
          stack.push({
            value: (value as Record<string, unknown>)[name],
            path: join(path, problem === undefined ? name : printable(name)),
            depth: depth + 1,
            ...(problem === undefined ? {} : { key: problem })
          })
        }
      }
    }
  }
  return issues.slice(0, MAX_ISSUES)
}

/** More than `limit` opening brackets (native searches; typical bodies have a handful). */
const bracketsExceed = (text: string, limit: number): boolean => {
  let count = 0
  for (const open of ["{", "["]) {
    for (let at = text.indexOf(open); at !== -1; at = text.indexOf(open, at + 1)) if (++count > limit) return true
  }
  return false
}

/** Issues of a JSON body's text; undefined when it is clean or not JSON at all. */
export const jsonIssues = (text: string): Issue[] | undefined => {
  // Without a `\u` escape no string can hold a problem, and with few brackets nothing nests too deep.
  if (!text.includes("\\u") && !bracketsExceed(text, MAX_JSON_DEPTH)) return undefined
  if (!needsWalk(text)) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  const issues = walk(value)
  return issues.length === 0 ? undefined : issues
}

/** The 422 body, as the API's own validation errors have it. */
export const validationBody = (issues: ReadonlyArray<Issue>, requestId: string): string =>
  JSON.stringify({
    code: "VALIDATION_ERROR",
    message: issues.length === 1 ? `${issues[0]!.path}: ${issues[0]!.message}` : `${issues.length} validation issues`,
    details: { issues },
    request_id: requestId
  })
