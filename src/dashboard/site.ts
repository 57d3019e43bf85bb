/**
 * The built dashboard (`vite build` into DASHBOARD_DIR), read into memory once at start. Only the
 * files found then are ever served, looked up by exact relative path, so no request path reaches
 * the file system (no traversal, no symlink surprises, no late writes served half-done).
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { extname, join, relative, sep } from "node:path"

export interface SiteFile {
  readonly body: Uint8Array
  readonly contentType: string
  readonly etag: string
}

export interface Site {
  /** `index.html`, or undefined when the dashboard was not built. */
  readonly index: SiteFile | undefined
  /** Every other file, keyed by its path relative to the build directory (`assets/index-Ab12.js`). */
  readonly files: ReadonlyMap<string, SiteFile>
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8"
}

export const contentTypeOf = (path: string): string => contentTypes[extname(path).toLowerCase()] ?? "application/octet-stream"

const fileOf = (path: string, body: Uint8Array): SiteFile => ({
  body,
  contentType: contentTypeOf(path),
  etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`
})

const walk = (root: string, dir: string, into: Map<string, SiteFile>) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(root, path, into)
    // Regular files only: a symlink in the build could point anywhere.
    else if (entry.isFile()) into.set(relative(root, path).split(sep).join("/"), fileOf(path, readFileSync(path)))
  }
}

export const loadSite = (dir: string): Site => {
  if (!existsSync(join(dir, "index.html")) || !statSync(dir).isDirectory()) return { index: undefined, files: new Map() }
  const files = new Map<string, SiteFile>()
  walk(dir, dir, files)
  const index = files.get("index.html")
  files.delete("index.html")
  return { index, files }
}
