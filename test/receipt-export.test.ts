/**
 * GET /api/v1/receipts/{receipt_uuid}/export (CONTRACT-sdk-beyond §2) as both SDKs call it
 * (`exportReceipt(id)` / `export_receipt(id)`: `?format=json`, Bearer key, the answer parsed as
 * JSON): the document's exact keys, checked offline by `npm run verify` against a JWKS file and,
 * for its timestamp token, by `openssl ts -verify` over the exported canonical text; the PDF,
 * identical at every download with its hash as ETag; refusals.
 */
import { execFile, spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { canonicalJson, payloadHash, sha256Tagged, verifyReceipt } from "../protocol/verifier/index.js"
import { answer, client, type GatewayClient, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/receipt-export/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("Export Org"), other: register("Export Other Org") })).pipe(Layer.provideMerge(Gateway.layer()))

const EXPORT_KEYS = [
  "format", "export_version", "receipt_uuid", "action_uuid", "receipt", "signed_payload", "canonical_payload", "payload_hash", "signature", "public_key_id",
  "public_key", "timestamp_token", "tsa_certificate", "previous", "verify_url", "jwks_url", "platform_did", "exported_at", "request_id"
]

const workDir = mkdtempSync(join(tmpdir(), "receipt-export-"))
const writeTemp = (name: string, data: string | Uint8Array) => {
  const path = join(workDir, name)
  writeFileSync(path, data)
  return path
}

let counter = 0
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++counter}`

/** Two notarized actions of one agent (the second with a replay context): receipts 1 and 2 of its chain. */
const chainOfTwo = (api: GatewayClient) =>
  Effect.gen(function* () {
    const agent = unique("export-bot")
    const first = yield* api.actions.authorize({ headers: {}, payload: { action_type: "ledger.write", details: "one", agent_id: agent } })
    const firstDone = yield* api.actions.notarize({ params: { action_uuid: first.action_uuid }, payload: { outcome: "completed" } })
    const second = yield* api.actions.authorize({
      headers: {},
      payload: { action_type: "ledger.close", details: "two", agent_id: agent, system_prompt_hash: "sha256:prompt", model_params: { temperature: 0 } }
    })
    const secondDone = yield* api.actions.notarize({ params: { action_uuid: second.action_uuid }, payload: { outcome: "completed" } })
    return { first: firstDone, second: secondDone, secondAction: second.action_uuid }
  })

/** The export as the SDKs fetch it: GET with `?format=json` and the key, parsed as JSON (all keys as sent). */
const exported = (api: GatewayClient, receiptUuid: string, format?: "json") =>
  Effect.gen(function* () {
    const [, reply] = yield* api.receipts.export({ params: { receipt_uuid: receiptUuid }, query: format === undefined ? {} : { format }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    expect(reply.headers["content-type"]).toMatch(/^application\/json/)
    return (yield* reply.json) as Record<string, any>
  })

const pdfDownload = (token: string, receiptUuid: string) =>
  Effect.gen(function* () {
    const server = yield* Gateway
    // Raw: the PDF is bytes, which the test reads and hashes as sent.
    const response = yield* Effect.promise(() => fetch(`${server.url}/api/v1/receipts/${receiptUuid}/export?format=pdf`, { headers: { authorization: `Bearer ${token}` } }))
    return { response, bytes: new Uint8Array(yield* Effect.promise(() => response.arrayBuffer())) }
  })

/** `npm run verify` on files, as an auditor runs it (asynchronous: nothing here needs the server). */
const cli = (...args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    promisify(execFile)("npx", ["tsx", "scripts/verify.ts", ...args], { cwd: join(__dirname, "..") }).then(
      (result) => ({ code: 0, output: result.stdout + result.stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout}${error.stderr}` })
    )
  )

liveLayer(Setup)((it) => {
  it.effect("the JSON export holds exactly the contract's keys, the stored receipt, its exact signed text and the previous link", () =>
    Effect.gen(function* () {
      const server = yield* Gateway
      const { org } = yield* Orgs
      const api = yield* client(org.key)
      const { first, second, secondAction } = yield* chainOfTwo(api)

      const document = yield* exported(api, second.receipt_uuid, "json")
      expect(Object.keys(document).sort()).toEqual([...EXPORT_KEYS].sort())
      const stored = yield* Effect.flatMap(api.receipts.get({ params: { receipt_uuid: second.receipt_uuid }, responseMode: "decoded-and-response" }), ([, reply]) => reply.json)
      const { request_id: _storedRequestId, ...receipt } = stored as Record<string, unknown>
      expect(document.receipt).toEqual(receipt)
      expect(document).toMatchObject({
        format: "gateway-receipt/1",
        export_version: "1.0",
        receipt_uuid: second.receipt_uuid,
        action_uuid: secondAction,
        payload_hash: second.payload_hash,
        signature: second.signature,
        public_key_id: second.public_key_id,
        timestamp_token: second.timestamp_token,
        verify_url: `${server.url}/api/v1/verify/action/${secondAction}`,
        jwks_url: `${server.url}/api/v1/.well-known/jwks.json`,
        platform_did: `did:web:127.0.0.1%3A${new URL(server.url).port}`
      })
      expect(document.signed_payload).toEqual(receipt.signed_payload)
      expect(document.signed_payload.receipt_version).toBe("1.3")
      // The exact signed text: canonical, and what payload_hash is the hash of.
      expect(document.canonical_payload).toBe(canonicalJson(document.signed_payload))
      expect(sha256Tagged(new TextEncoder().encode(document.canonical_payload))).toBe(document.payload_hash)
      const jwks = yield* (yield* client()).receiptsPublic.jwks({})
      expect(document.public_key).toEqual(jwks.keys.find((key) => key.kid === document.public_key_id))
      expect(document.tsa_certificate).toBe(yield* (yield* client()).receiptsPublic.tsaCertificate({ query: {} }))
      expect(document.previous).toEqual({ receipt_uuid: first.receipt_uuid, payload_hash: first.payload_hash, signed_payload: expect.any(Object) })
      expect(payloadHash(document.previous.signed_payload)).toBe(first.payload_hash)
      expect(Date.parse(document.exported_at)).not.toBeNaN()
      expect(document.request_id).toMatch(/^req_/)

      // The portable verifier takes it as it is, chain link included.
      const offline = verifyReceipt({ ...document, previous: document.previous } as never)
      expect(offline.errors).toEqual([])
      expect(offline.checks).toMatchObject({ payload_hash: true, signature: true, chain: true, timestamp_imprint: true, replay_context: true })

      // Without format, the same document; the first receipt of the chain has no previous one.
      const firstExport = yield* exported(api, first.receipt_uuid)
      expect(firstExport.previous).toBeNull()
      expect(firstExport.signed_payload.receipt_version).toBe("1.1")
    })
  )

  it.effect(
    "npm run verify checks the export offline against a saved JWKS (chain and replay context included); openssl verifies its token",
    () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const { second, secondAction } = yield* chainOfTwo(api)
        const document = yield* exported(api, second.receipt_uuid, "json")
        const jwksFile = writeTemp("jwks.json", JSON.stringify(yield* (yield* client()).receiptsPublic.jwks({})))
        const replayContext = yield* Effect.flatMap(api.actions.replayContext({ params: { action_uuid: secondAction }, responseMode: "decoded-and-response" }), ([, reply]) => reply.json)
        const exportFile = writeTemp("export.json", JSON.stringify(document))

        const good = yield* cli(exportFile, "--jwks", jwksFile, "--replay-context", writeTemp("replay.json", JSON.stringify(replayContext)))
        expect(good.code, good.output).toBe(0)
        for (const check of ["payload_hash", "signature", "chain", "timestamp_imprint", "replay_context"]) expect(good.output).toContain(`ok   ${check}`)

        const otherContext = yield* cli(exportFile, "--jwks", jwksFile, "--replay-context", writeTemp("other-replay.json", JSON.stringify({ ...(replayContext as object), model_params: { temperature: 1 } })))
        expect(otherContext.code).not.toBe(0)
        expect(otherContext.output).toContain("FAIL replay_context")
        const brokenLink = yield* cli(writeTemp("broken-link.json", JSON.stringify({ ...document, previous: { ...document.previous, payload_hash: `sha256:${"0".repeat(64)}` } })), "--jwks", jwksFile)
        expect(brokenLink.code).not.toBe(0)
        expect(brokenLink.output).toContain("FAIL chain")
        const tampered = yield* cli(writeTemp("tampered.json", JSON.stringify({ ...document, signed_payload: { ...document.signed_payload, outcome: "failed" } })), "--jwks", jwksFile)
        expect(tampered.code).not.toBe(0)
        expect(tampered.output).toMatch(/FAIL payload_hash/)

        // The token is over sha256 of the exported canonical text, and the exported certificate signed it.
        const verify = (data: string) =>
          spawnSync(
            "openssl",
            ["ts", "-verify", "-data", writeTemp("canonical.json", data), "-token_in", "-in", writeTemp("token.der", Buffer.from(document.timestamp_token, "base64")), "-CAfile", writeTemp("tsa.pem", document.tsa_certificate)],
            { encoding: "utf8" }
          )
        const ok = verify(document.canonical_payload)
        expect(ok.stdout + ok.stderr).toContain("Verification: OK")
        const digest = spawnSync(
          "openssl",
          ["ts", "-verify", "-digest", document.payload_hash.slice("sha256:".length), "-sha256", "-token_in", "-in", join(workDir, "token.der"), "-CAfile", join(workDir, "tsa.pem")],
          { encoding: "utf8" }
        )
        expect(digest.stdout + digest.stderr).toContain("Verification: OK")
        const changed = verify(`${document.canonical_payload} `)
        expect(changed.stdout + changed.stderr).not.toContain("Verification: OK")
      }),
    90_000
  )

  it.effect.skipIf(pdftotextPath === undefined)("the PDF prints the same fields, is the same bytes at every download, and its ETag is their hash", () =>
    Effect.gen(function* () {
      const { org } = yield* Orgs
      const api = yield* client(org.key)
      const { second } = yield* chainOfTwo(api)
      const one = yield* pdfDownload(org.key, second.receipt_uuid)
      expect(one.response.status).toBe(200)
      expect(one.response.headers.get("content-type")).toBe("application/pdf")
      expect(one.response.headers.get("content-disposition")).toBe(`attachment; filename="receipt-${second.receipt_uuid}.pdf"`)
      expect(one.response.headers.get("etag")).toBe(`"${sha256Tagged(one.bytes)}"`)
      expect(Number(one.response.headers.get("content-length"))).toBe(one.bytes.length)
      expect(Buffer.from(one.bytes.subarray(0, 5)).toString("latin1")).toBe("%PDF-")
      const two = yield* pdfDownload(org.token, second.receipt_uuid)
      expect(Buffer.from(two.bytes).equals(Buffer.from(one.bytes))).toBe(true)
      expect(two.response.headers.get("etag")).toBe(one.response.headers.get("etag"))

      const document = yield* exported(api, second.receipt_uuid)
      const text = pdfText(one.bytes).replace(/\s+/g, "")
      for (const field of [document.receipt_uuid, document.action_uuid, document.payload_hash, document.public_key_id, document.previous.receipt_uuid, document.signed_payload.replay_context_hash]) {
        expect(text).toContain(field.replace(/\s+/g, ""))
      }
      expect(text).toContain(document.signature.slice(0, 40))
    })
  )

  it.effect("refuses another organization (404, JSON and PDF), an unknown receipt (404), another format (422) and a key without receipts:read (403)", () =>
    Effect.gen(function* () {
      const { org, other } = yield* Orgs
      const api = yield* client(org.key)
      const { second } = yield* chainOfTwo(api)
      const params = { receipt_uuid: second.receipt_uuid }
      for (const token of [other.key, other.token]) {
        const outsider = yield* client(token)
        const json = yield* answer(outsider.receipts.export({ params, query: { format: "json" }, responseMode: "response-only" }))
        expect(json.status).toBe(404)
        expect(json.body.code).toBe("NOT_FOUND")
        const pdf = yield* pdfDownload(token, second.receipt_uuid)
        expect(pdf.response.status).toBe(404)
      }
      expect((yield* api.receipts.export({ params: { receipt_uuid: "rct_missing" }, query: {}, responseMode: "response-only" })).status).toBe(404)
      // Raw: a format outside the contract, which the typed client refuses to encode.
      const xml = yield* raw("GET", `/api/v1/receipts/${second.receipt_uuid}/export?format=xml`, { token: org.key })
      expect(xml.status).toBe(422)
      expect(xml.body.code).toBe("VALIDATION_ERROR")
      const [narrow] = yield* (yield* client(org.token)).apiKeys.create({ payload: { name: "actions only", scopes: ["actions:read"] }, responseMode: "decoded-and-response" })
      const forbidden = yield* answer((yield* client(narrow.key)).receipts.export({ params, query: {}, responseMode: "response-only" }))
      expect(forbidden.status).toBe(403)
      expect(forbidden.body.code).toBe("FORBIDDEN")
    })
  )
})
