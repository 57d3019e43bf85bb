/**
 * Whitelist patterns: `<scheme>://<host>[:port]/<path>`; a trailing `*` matches
 * any rest of the path. Scheme and host compare case-insensitively, the path
 * exactly; query and fragment of the URL are not part of the match.
 */
export interface ParsedPattern {
  readonly origin: string
  readonly path: string
  readonly prefix: boolean
}

export const parsePattern = (pattern: string): ParsedPattern | undefined => {
  const prefix = pattern.endsWith("*")
  const body = prefix ? pattern.slice(0, -1) : pattern
  let url: URL
  try {
    url = new URL(body)
  } catch {
    return undefined
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return undefined
  if (url.username || url.password || url.search || url.hash) return undefined
  // `https://host*` (no path) is read as "anything on that host".
  const path = prefix && !/^[a-z]+:\/\/[^/]+\//i.test(body) ? "/" : url.pathname
  return { origin: `${url.protocol}//${url.host}`, path, prefix }
}

export const matchesPattern = (pattern: ParsedPattern, url: URL): boolean => {
  if (`${url.protocol}//${url.host}` !== pattern.origin) return false
  return pattern.prefix ? url.pathname.startsWith(pattern.path) : url.pathname === pattern.path
}

/** `<scheme>://<host>/*` for a top-level path, else the path's parent directory + `*`. */
export const suggestPattern = (url: URL): string => {
  const parent = url.pathname.slice(0, url.pathname.lastIndexOf("/") + 1) || "/"
  return `${url.protocol}//${url.host}${parent}*`
}
