/**
 * Libraries only some requests need are not loaded at start (docs/decisions.md "What is loaded at
 * start"): the real entry point runs in its own process with a module-load log
 * (support/module-log.mjs), and after start none of LOADED_ON_FIRST_USE is in it. A text sanitize
 * then loads compromise, and only it, and still finds the name.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, registerOrg } from "./support/client.js"
import { type FreshDatabase, freshDatabaseUrl, UNUSED_DATA_DIR } from "./support/database.js"
import { type ServerProcess, spawnServer } from "./support/process.js"

/**
 * Packages that must not be loaded until a request needs them: a package name, or `@scope/*` for
 * every package of a scope. Add yours here when you make a library load on first use.
 */
const LOADED_ON_FIRST_USE: ReadonlyArray<string> = [
  "compromise",
  "sharp",
  "mupdf",
  "dcmjs",
  "tesseract.js",
  "pdfkit",
  "fontkit",
  "ai",
  "@ai-sdk/*",
  "zod",
  "nodemailer",
  "@digitalbazaar/*",
  "jsonld-signatures",
  "@node-saml/*",
  "@xmldom/*",
  // REDIS_URL is empty here: no Redis, no client library.
  "redis",
  "@redis/*",
  // The outbound client's connection pools: loaded by the first webhook send or model call.
  "undici",
  // The worker pools (PDF reports, file decoders, DICOM): loaded by their first job.
  "piscina",
  // Phone metadata of every region: loaded by the first text with a phone-like run of digits.
  "libphonenumber-js"
]
/** Scalar's bundled script (the /docs page), a file inside effect rather than a package of its own. */
const SCALAR_BUNDLE = "/node_modules/effect/dist/http-api/internal/httpApiScalar.js"

const logDir = mkdtempSync(join(tmpdir(), "gateway-modules-"))
const moduleLog = join(logDir, "loaded.txt")
const hook = pathToFileURL(join(import.meta.dirname, "support", "module-log.mjs")).href

let database: FreshDatabase | undefined
let server: ServerProcess | undefined

/** Which of `packages` the process has loaded so far (a file of theirs under any node_modules). */
const loaded = (packages: ReadonlyArray<string>): Array<string> => {
  const urls = existsSync(moduleLog) ? readFileSync(moduleLog, "utf8") : ""
  return packages.filter((name) => urls.includes(`/node_modules/${name.endsWith("/*") ? name.slice(0, -1) : `${name}/`}`))
}

beforeAll(async () => {
  database = await freshDatabaseUrl()
  server = await spawnServer({
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${hook}`.trim(),
    MODULE_LOG: moduleLog,
    DATABASE_URL: database.url,
    REDIS_URL: "",
    DATA_DIR: UNUSED_DATA_DIR,
    MASTER_KEY: "3333333333333333333333333333333333333333333333333333333333333333",
    RATE_LIMIT_PER_MINUTE: "100000"
  })
})
afterAll(async () => {
  await server?.stop()
  await database?.drop()
  rmSync(logDir, { recursive: true, force: true })
})

describe("what the gateway loads", () => {
  it("loads none of the on-first-use libraries at start", () => {
    // The log is being written: the gateway's own modules are in it.
    expect(readFileSync(moduleLog, "utf8")).toMatch(/\/src\/app\.ts\n/)
    expect(loaded(LOADED_ON_FIRST_USE)).toEqual([])
    expect(readFileSync(moduleLog, "utf8")).not.toContain(SCALAR_BUNDLE)
  })

  it("loads compromise with the first text sanitize, and nothing else of the list", async () => {
    const org = await registerOrg(server!.url, "Lazy modules")
    const reply = await call(server!.url, "POST", "/api/v1/sanitize", { token: org.key, body: { content: "Please call Maria Garcia tomorrow." } })
    expect(reply.status).toBe(200)
    expect(reply.body.clean).toBe("Please call [REDACTED_NER_PERSON] tomorrow.")
    expect(reply.body.findings.map((finding: { entity_type: string }) => finding.entity_type)).toEqual(["ner_person"])
    expect(loaded(LOADED_ON_FIRST_USE)).toEqual(["compromise"])
  })
})
