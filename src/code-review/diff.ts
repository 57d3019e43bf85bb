/**
 * What a unified diff (GitHub's `application/vnd.github.diff`) offers inline comments: per file
 * (its new path), the new-side lines a hunk shows (added or context). GitHub refuses a review
 * whose comment points elsewhere, so violations on other lines go into the review's body.
 */

/** New path → the new-side line numbers the diff shows. */
export type CommentableLines = ReadonlyMap<string, ReadonlySet<number>>

const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/

export const commentableLines = (diff: string): CommentableLines => {
  const files = new Map<string, Set<number>>()
  let lines: Set<number> | undefined
  let next = 0
  let inHunk = false
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ")) {
      lines = undefined
      inHunk = false
      continue
    }
    if (!inHunk && line.startsWith("+++ ")) {
      const path = line.slice(4).trim()
      if (path === "/dev/null") lines = undefined
      else {
        const name = path.startsWith("b/") ? path.slice(2) : path
        lines = files.get(name) ?? new Set<number>()
        files.set(name, lines)
      }
      continue
    }
    const hunk = HUNK.exec(line)
    if (hunk !== null) {
      next = Number(hunk[1])
      inHunk = true
      continue
    }
    if (!inHunk || lines === undefined) continue
    if (line.startsWith("+") || line.startsWith(" ")) lines.add(next++)
    else if (line.startsWith("-") || line.startsWith("\\") || line === "") continue
    else inHunk = false
  }
  return files
}
