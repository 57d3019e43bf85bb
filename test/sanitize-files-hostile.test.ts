/**
 * Hostile uploads against the real server in this process (issue: small files that crashed the
 * gateway): decompression bombs, huge declared dimensions, too many pages, deep nesting, lying
 * length fields — built byte by byte in test/support/hostile-files.ts. Each is refused with a 4xx
 * naming the budget it passed, before anything is decoded; afterwards the server still answers
 * /health and still sanitizes an ordinary image. Were any of them decoded, this process would run
 * out of memory or die with it.
 */
import { describe, expect, it } from "vitest"
import { registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { hostileUploads } from "./support/hostile-files.js"
import { textImage } from "./support/sanitize-files.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Hostile Uploads"))
const ordinary = useFixture(async () => ({ png: await textImage(["Contact john.doe@example.com today"], 600) }))

const upload = async (file: Uint8Array, fields: Record<string, string> = {}) => {
  const form = new FormData()
  form.append("file", new Blob([new Uint8Array(file)]), "upload.bin")
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  const response = await fetch(`${server.url}/api/v1/sanitize/file`, { method: "POST", headers: { authorization: `Bearer ${org.key}` }, body: form })
  return { status: response.status, body: (await response.json()) as { code?: string; details?: unknown; findings?: unknown[] } }
}

/** The server lives: /health answers and an ordinary PNG is sanitized (the e-mail found). */
const stillServing = async () => {
  expect((await fetch(`${server.url}/health`)).status).toBe(200)
  const reply = await upload(ordinary.png)
  expect(reply.status).toBe(200)
  expect(JSON.stringify(reply.body.findings)).toContain("email")
}

const cases = hostileUploads()

/** The 422 body a refusal must have: its code, and for a budget the `limit` and `maximum` it names. */
const expected = (refusal: (typeof cases)[number]["refusal"]) =>
  refusal.code === "FILE_TOO_COMPLEX" ? { code: refusal.code, details: { limit: refusal.limit, maximum: refusal.maximum } } : { code: refusal.code }

describe("hostile uploads are refused before they are decoded", () => {
  for (const hostile of cases)
    it(`${hostile.name} → 422 ${hostile.refusal.code}`, async () => {
      const reply = await upload(hostile.file(), hostile.fields)
      expect(reply.status).toBe(422)
      expect(reply.body).toMatchObject(expected(hostile.refusal))
      await stillServing()
    })

  it("all of them at once: each refused as alone, while /health keeps answering", async () => {
    const [health, ...replies] = await Promise.all([fetch(`${server.url}/health`).then((r) => r.status), ...cases.map((hostile) => upload(hostile.file(), hostile.fields))])
    expect(replies.map((reply) => [reply.status, reply.body.code])).toEqual(cases.map((hostile) => [422, hostile.refusal.code]))
    expect(health).toBe(200)
    await stillServing()
  }, 180_000)
})
