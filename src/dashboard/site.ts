/**
 * The built dashboard (`vite build` into DASHBOARD_DIR), read into memory once at start. Only the
 * files found then are ever served, looked up by exact relative path, so no request path reaches
 * the file system (no traversal, no symlink surprises, no late writes served half-done).
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { extname, join, relative, sep } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"

export type Encoding = "br" | "gzip"

export interface SiteFile {
  readonly body: Uint8Array
  readonly contentType: string
  readonly etag: string
  /** The same content compressed (text files only), each with its own entity tag. */
  readonly encoded: Partial<Record<Encoding, { readonly body: Uint8Array; readonly etag: string }>>
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

const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".txt", ".map"])
const SUFFIX: Record<Encoding, string> = { br: ".br", gzip: ".gz" }

/**
 * The build's `.br`/`.gz` twin of a text file (scripts/build-dashboard.mjs writes them); a build made
 * without them (vite alone) is compressed here once, quickly, rather than served uncompressed.
 */
const encodedOf = (path: string, body: Uint8Array, encoding: Encoding, tag: string) => {
  const twin = `${path}${SUFFIX[encoding]}`
  let encoded: Uint8Array
  if (existsSync(twin) && statSync(twin).mtimeMs >= statSync(path).mtimeMs) encoded = readFileSync(twin)
  else encoded = encoding === "br" ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }) : gzipSync(body, { level: 6 })
  return { body: encoded, etag: `"${tag}-${encoding}"` }
}

const fileOf = (path: string, body: Uint8Array): SiteFile => {
  const tag = createHash("sha256").update(body).digest("base64url").slice(0, 22)
  const compressible = COMPRESSIBLE.has(extname(path).toLowerCase()) && body.length > 256
  return {
    body,
    contentType: contentTypeOf(path),
    etag: `"${tag}"`,
    encoded: compressible ? { br: encodedOf(path, body, "br", tag), gzip: encodedOf(path, body, "gzip", tag) } : {}
  }
}

const walk = (root: string, dir: string, into: Map<string, SiteFile>) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(root, path, into)
    // Regular files only (a symlink in the build could point anywhere); the compressed twins ride with their file.
    else if (entry.isFile() && !/\.(br|gz)$/.test(entry.name)) into.set(relative(root, path).split(sep).join("/"), fileOf(path, readFileSync(path)))
  }
}

/** The encoding to answer for an Accept-Encoding header: brotli, else gzip, else none (q=0 refuses one). */
export const chooseEncoding = (acceptEncoding: string | undefined): Encoding | undefined => {
  if (acceptEncoding === undefined) return undefined
  const accepted = new Map<string, number>()
  for (const part of acceptEncoding.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";")
    const q = params.map((param) => /^\s*q=([0-9.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined)
    accepted.set(name.trim(), q === undefined ? 1 : Number(q))
  }
  const weight = (name: Encoding) => accepted.get(name) ?? accepted.get("*") ?? 0
  if (weight("br") > 0) return "br"
  if (weight("gzip") > 0) return "gzip"
  return undefined
}

export const loadSite = (dir: string): Site => {
  if (!existsSync(join(dir, "index.html")) || !statSync(dir).isDirectory()) return { index: undefined, files: new Map() }
  const files = new Map<string, SiteFile>()
  walk(dir, dir, files)
  const index = files.get("index.html")
  files.delete("index.html")
  return { index, files }
}
