/**
 * Signed explanations end to end (CONTRACT.md "Signed explanations"): exactly the documented keys;
 * the envelope recomputed offline with a canonicalizer written here and the JWKS key through
 * node:crypto; any one-byte change breaks it; recorded policy chains for new actions (a policy
 * denial, a human approval, a rules allow) and an inferred one for an action from before evaluations
 * were recorded; the approval chain; the PDF; the public verify route's answers; other
 * organizations' ids 404.
 */
import { execFile } from "node:child_process"
import { createHash, createPublicKey, verify } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { verifyExplanation } from "../protocol/verifier/explanation.js"
import { call, type Org, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { pdfText, pdftotextPath } from "./support/pdf-text.js"
import { useServer } from "./support/server.js"

const server = useServer()
const org = useFixture(() => registerOrg(server.url, "Explanations Org"))
const other = useFixture(() => registerOrg(server.url, "Other Explanations Org"))

let counter = 0
const uniqueType = (label: string) => `${label}.${process.pid}.${Date.now().toString(36)}.${++counter}`

/** RFC 8785 for the values an explanation holds (strings, booleans, null, safe numbers), independent of the service's library. */
const jcs = (value: unknown): string => {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value)
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error("not finite")
    return Object.is(value, -0) ? "0" : JSON.stringify(value)
  }
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((key) => record[key] !== undefined)
  // JCS sorts keys by UTF-16 code units, which is JavaScript's default string order.
  keys.sort()
  return `{${keys.map((key) => `${JSON.stringify(key)}:${jcs(record[key])}`).join(",")}}`
}

const SIGNED = ["action", "policy_chain", "approval_chain", "receipt", "regulation"]

const jwks = async () => (await call(server.url, "GET", "/api/v1/.well-known/jwks.json")).body.keys as Array<{ kid: string; kty: "OKP"; crv: "Ed25519"; x: string }>

/** What a client does offline: rebuild the five keys, hash their JCS, check the Ed25519 signature with the JWKS key. */
const verifyOffline = (explanation: Record<string, any>, keys: Array<{ kid: string; kty: string; crv: string; x: string }>) => {
  const envelope = explanation._envelope
  const content = Object.fromEntries(SIGNED.map((key) => [key, explanation[key] ?? null]))
  const bytes = Buffer.from(jcs(content), "utf8")
  const jwk = keys.find((key) => key.kid === envelope.signing_key_id)
  if (jwk === undefined || envelope.alg !== "Ed25519") return { hashMatches: false, signatureValid: false }
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" })
  // Node decodes base64url leniently (the last character's spare bits are ignored): insist on the canonical text.
  const signature = Buffer.from(String(envelope.signature).replace(/^ed25519:/, ""), "base64url")
  return {
    hashMatches: `sha256:${createHash("sha256").update(bytes).digest("hex")}` === envelope.content_hash,
    signatureValid: verify(null, bytes, key, signature) && `ed25519:${signature.toString("base64url")}` === envelope.signature
  }
}

const authorize = async (owner: Org, body: Record<string, unknown>) =>
  call(server.url, "POST", "/api/v1/actions", { token: owner.key, body: { details: "explanation test", ...body } })
const authorized = async (owner: Org, body: Record<string, unknown>) => {
  const reply = await authorize(owner, body)
  expect(reply.status).toBe(201)
  return reply.body.action_uuid as string
}
const notarize = async (owner: Org, actionUuid: string) => {
  const reply = await call(server.url, "POST", `/api/v1/actions/${actionUuid}/notarize`, { token: owner.key, body: { outcome: "completed" } })
  expect(reply.status).toBe(200)
  return reply.body
}
const explain = (token: string, actionUuid: string) => call(server.url, "GET", `/api/v1/actions/${actionUuid}/explanation`, { token })
const verifyRoute = (body: unknown, options: { token?: string } = {}) => call(server.url, "POST", "/api/v1/verify/explanation", { body, ...options })
const withoutRequestId = ({ request_id: _id, ...rest }: Record<string, any>) => rest

const policy = async (owner: Org, body: Record<string, unknown>) => {
  const reply = await call(server.url, "POST", "/api/v1/policies", { token: owner.key, body: { activate: true, ...body } })
  expect(reply.status).toBe(201)
  return reply.body.id as string
}

describe("GET /api/v1/actions/{id}/explanation", () => {
  it("answers exactly the documented keys, signed so a client verifies it offline, and the same content_hash on every call", async () => {
    const agent = `explained-${process.pid}-${Date.now().toString(36)}`
    const actionUuid = await authorized(org, { action_type: uniqueType("report.send"), agent_id: agent, model_id: "gpt-x", instruction_hash: "sha256:abc" })
    const pending = await explain(org.key, actionUuid)
    expect(pending.status).toBe(200)
    expect(Object.keys(pending.body).sort()).toEqual(["_envelope", "action", "approval_chain", "policy_chain", "receipt", "regulation", "request_id"])
    expect(pending.body.receipt).toBeNull()
    expect(pending.body.action).toEqual({
      action_uuid: actionUuid,
      org_uuid: org.orgUuid,
      agent_id: agent,
      agent_version: null,
      action_type: expect.any(String),
      model_id: "gpt-x",
      model_version: null,
      instruction_hash: "sha256:abc",
      action_details_hash: `sha256:${createHash("sha256").update("explanation test").digest("hex")}`,
      outcome_hash: null,
      parent_action_uuid: null,
      status: "authorized",
      created_at: expect.stringMatching(/Z$/)
    })
    expect(pending.body.regulation).toEqual({ framework: "eu_ai_act", instrument: "Regulation (EU) 2024/1689", articles: ["13", "14", "86"], explanation_version: "1.0" })

    const receipt = await notarize(org, actionUuid)
    const first = await explain(org.key, actionUuid)
    const second = await explain(org.token, actionUuid)
    const envelope = first.body._envelope
    expect(Object.keys(envelope).sort()).toEqual(["alg", "content_hash", "generated_at", "signature", "signing_key_id"])
    expect(envelope.alg).toBe("Ed25519")
    expect(envelope.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(envelope.signature).toMatch(/^ed25519:[A-Za-z0-9_-]{86}$/)
    expect(envelope.signing_key_id).toBe(receipt.public_key_id)
    expect(second.body._envelope.content_hash).toBe(envelope.content_hash)
    expect(second.body._envelope.signature).toBe(envelope.signature)
    expect(pending.body._envelope.content_hash).not.toBe(envelope.content_hash)

    expect(first.body.receipt).toEqual({
      receipt_uuid: receipt.receipt_uuid,
      receipt_status: "notarized",
      receipt_version: "1.1",
      payload_hash: receipt.payload_hash,
      signature: receipt.signature,
      public_key_id: receipt.public_key_id,
      timestamp_token_present: receipt.timestamp_token !== null,
      verify_url: `${server.url}/api/v1/verify/action/${actionUuid}`,
      created_at: receipt.created_at
    })
    expect(first.body.action.status).toBe("notarized")

    const keys = await jwks()
    expect(keys.map((key) => key.kid)).toContain(envelope.signing_key_id)
    expect(verifyOffline(first.body, keys)).toEqual({ hashMatches: true, signatureValid: true })
    // The portable verifier agrees, and the JSON round trip changes nothing.
    expect(verifyExplanation(JSON.parse(JSON.stringify(withoutRequestId(first.body))), keys as any).valid).toBe(true)
  })

  it("fails offline after any one-byte change of the signed JSON", async () => {
    const actionUuid = await authorized(org, { action_type: uniqueType("edit"), agent_id: "byte-flipper" })
    await notarize(org, actionUuid)
    const explanation = withoutRequestId((await explain(org.key, actionUuid)).body)
    const keys = await jwks()
    // generated_at is not signed (CONTRACT): leave its value out of the changed bytes.
    const { generated_at: _at, ...envelope } = explanation._envelope
    const text = JSON.stringify({ ...explanation, _envelope: envelope })
    expect(verifyExplanation(JSON.parse(text), keys as any).valid).toBe(true)
    fc.assert(
      fc.property(fc.nat({ max: text.length - 1 }), fc.integer({ min: 0x20, max: 0x7e }), (position, code) => {
        const changed = String.fromCharCode(code)
        fc.pre(changed !== text[position])
        const tampered = text.slice(0, position) + changed + text.slice(position + 1)
        let parsed: unknown
        try {
          parsed = JSON.parse(tampered)
        } catch {
          return true // not JSON any more: nothing to accept
        }
        const result = verifyExplanation(parsed, keys as any)
        expect(result.valid).toBe(false)
        if (typeof parsed === "object" && parsed !== null && typeof (parsed as any)._envelope === "object" && (parsed as any)._envelope !== null) {
          const offline = verifyOffline(parsed as Record<string, any>, keys)
          expect(offline.hashMatches && offline.signatureValid).toBe(false)
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("records the policy evaluations of new actions: a policy denial, a human approval after require_approval, a rules allow", async () => {
    const denyType = uniqueType("wire")
    const reviewType = uniqueType("refund")
    const denyId = await policy(org, { name: "no wires", mode: "rules", decision: "deny", priority: 10, conditions: [{ field: "action_type", op: "eq", value: denyType }] })
    const reviewId = await policy(org, { name: "refunds need a human", mode: "rules", decision: "require_approval", priority: 5, conditions: [{ field: "action_type", op: "eq", value: reviewType }] })

    const denied = await authorize(org, { action_type: denyType })
    expect(denied.status).toBe(403)
    const deniedUuid = denied.body.details.action_uuid as string
    const deniedChain = (await explain(org.key, deniedUuid)).body.policy_chain as Array<Record<string, any>>
    const denial = deniedChain.find((entry) => entry.policy_uuid === denyId)
    expect(denial).toMatchObject({ policy_name: "no wires", mode: "rules", decision: "deny", confidence: 1, model_votes: null, evidence_quality: "recorded" })
    expect(denial!.reasoning).toContain("no wires")
    expect(denial!.evaluated_at).toMatch(/Z$/)
    // A deny stops evaluation: it is the last entry, and the orders count from 1.
    expect(deniedChain.at(-1)).toBe(denial)
    expect(deniedChain.map((entry) => entry.order)).toEqual(deniedChain.map((_, index) => index + 1))
    expect(deniedChain.every((entry) => entry.evidence_quality === "recorded")).toBe(true)

    const reviewed = await authorized(org, { action_type: reviewType })
    expect((await call(server.url, "POST", `/api/v1/actions/${reviewed}/dashboard-approve`, { token: org.token })).status).toBe(200)
    await call(server.url, "POST", `/api/v1/actions/${reviewed}/cosign`, { token: org.token })
    await notarize(org, reviewed)
    const reviewedBody = (await explain(org.key, reviewed)).body
    expect(reviewedBody.policy_chain.find((entry: any) => entry.policy_uuid === reviewId)).toMatchObject({ decision: "require_approval", evidence_quality: "recorded" })
    expect(reviewedBody.policy_chain.find((entry: any) => entry.policy_uuid === denyId)).toMatchObject({ decision: "allow", evidence_quality: "recorded" })
    const approvals = reviewedBody.approval_chain as Array<Record<string, any>>
    expect(approvals[0]).toEqual({ kind: "approval", email: org.email, channel: "dashboard", reason: null, at: expect.stringMatching(/Z$/) })
    expect(approvals.map((entry) => entry.kind)).toEqual(["approval", "cosignature"])
    expect(JSON.stringify(reviewedBody)).not.toMatch(/approval_code|approve_url|token=/)

    const allowed = await authorized(org, { action_type: uniqueType("read") })
    const allowedChain = (await explain(org.key, allowed)).body.policy_chain as Array<Record<string, any>>
    expect(allowedChain.every((entry) => entry.decision === "allow" && entry.evidence_quality === "recorded")).toBe(true)
  })

  it("infers one entry for actions authorized before evaluations were recorded", async () => {
    const forbidden = uniqueType("legacy.forbidden")
    await policy(org, { name: "legacy deny", mode: "rules", decision: "deny", priority: 100, conditions: [{ field: "action_type", op: "eq", value: forbidden }] })
    const denied = (await authorize(org, { action_type: forbidden })).body.details.action_uuid as string
    const human = await authorized(org, { action_type: uniqueType("legacy.human"), require_approval: true })
    expect((await call(server.url, "POST", `/api/v1/actions/${human}/dashboard-deny?reason=too%20risky`, { token: org.token })).status).toBe(200)
    const plain = await authorized(org, { action_type: uniqueType("legacy.plain") })
    // As a row written before migration 0027 looks.
    await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE actions SET policy_evaluations = NULL WHERE action_uuid IN (${denied}, ${human}, ${plain})`)
    )
    const chainOf = async (id: string) => (await explain(org.key, id)).body.policy_chain as Array<Record<string, any>>
    const deniedChain = await chainOf(denied)
    expect(deniedChain).toHaveLength(1)
    expect(deniedChain[0]).toMatchObject({ order: 1, decision: "deny", policy_name: "legacy deny", mode: "rules", confidence: null, evidence_quality: "inferred" })
    expect((await chainOf(human))[0]).toMatchObject({ decision: "require_approval", policy_uuid: null, evidence_quality: "inferred" })
    expect((await chainOf(plain))[0]).toMatchObject({ decision: "allow", evidence_quality: "inferred" })

    const humanBody = (await explain(org.key, human)).body
    expect(humanBody.approval_chain).toEqual([{ kind: "denial", email: org.email, channel: "dashboard", reason: "too risky", at: expect.stringMatching(/Z$/) }])
    expect(verifyOffline(humanBody, await jwks())).toEqual({ hashMatches: true, signatureValid: true })
  })

  it("answers 404 NOT_FOUND for another organization's action and an unknown id; a key without actions:read is refused", async () => {
    const mine = await authorized(org, { action_type: uniqueType("private") })
    for (const path of [`/api/v1/actions/${mine}/explanation`, `/api/v1/actions/${mine}/explanation/pdf`, "/api/v1/actions/act_unknown/explanation"]) {
      const reply = await call(server.url, "GET", path, { token: other.key })
      expect(reply.status, path).toBe(404)
      expect(reply.body.code).toBe("NOT_FOUND")
    }
    const narrow = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "receipts only", scopes: ["receipts:read"] } })
    expect(narrow.status).toBe(201)
    expect((await explain(narrow.body.key, mine)).status).toBe(403)
    const reader = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "actions reader", scopes: ["actions:read"] } })
    expect((await explain(reader.body.key, mine)).status).toBe(200)
  })
})

describe("GET /api/v1/actions/{id}/explanation/pdf", () => {
  it.skipIf(pdftotextPath === undefined)("answers the PDF with its headers; the text carries the envelope's hash, signature and key", async () => {
    const actionUuid = await authorized(org, { action_type: uniqueType("pdf.print") })
    await notarize(org, actionUuid)
    const envelope = (await explain(org.key, actionUuid)).body._envelope
    const response = await fetch(`${server.url}/api/v1/actions/${actionUuid}/explanation/pdf`, { headers: { authorization: `Bearer ${org.key}` } })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/pdf")
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="explanation-${actionUuid}.pdf"`)
    const bytes = new Uint8Array(await response.arrayBuffer())
    expect(Buffer.from(bytes.subarray(0, 5)).toString("latin1")).toBe("%PDF-")
    expect(Number(response.headers.get("content-length"))).toBe(bytes.byteLength)
    expect(response.headers.get("etag")).toBe(`"sha256:${createHash("sha256").update(bytes).digest("hex")}"`)
    const text = pdfText(bytes).replace(/\s+/g, "")
    expect(text).toContain(envelope.content_hash)
    expect(text).toContain(envelope.signing_key_id)
    expect(text).toContain(envelope.signature.replace(/\s+/g, ""))
    // Dated from the data: the same action prints the same bytes.
    const again = await fetch(`${server.url}/api/v1/actions/${actionUuid}/explanation/pdf`, { headers: { authorization: `Bearer ${org.key}` } })
    expect(again.headers.get("etag")).toBe(response.headers.get("etag"))
  })
})

describe("POST /api/v1/verify/explanation", () => {
  const signedExplanation = async () => {
    const actionUuid = await authorized(org, { action_type: uniqueType("verify.me") })
    await notarize(org, actionUuid)
    return (await explain(org.key, actionUuid)).body as Record<string, any>
  }

  it("is public: valid for {explanation}, the explanation itself and the envelope form; a key sent is ignored", async () => {
    const explanation = await signedExplanation()
    const wrapped = await verifyRoute({ explanation })
    expect(wrapped.status).toBe(200)
    expect(Object.keys(wrapped.body).sort()).toEqual(["checks", "request_id", "signing_key_id", "valid", "verified_at"])
    expect(wrapped.body).toMatchObject({
      valid: true,
      checks: { envelope_present: true, key_known: true, content_hash_matches: true, signature_valid: true },
      signing_key_id: explanation._envelope.signing_key_id
    })
    expect((await verifyRoute(explanation)).body.valid).toBe(true)
    const { _envelope, ...rest } = explanation
    expect((await verifyRoute({ explanation: { ...rest, envelope: _envelope } })).body.valid).toBe(true)
    const withKey = await verifyRoute({ explanation }, { token: "aira_live_not_a_real_key" })
    expect(withKey.body.valid).toBe(true)
    // Limited per client IP, whatever credentials are sent.
    expect(withKey.headers.get("ratelimit-policy")).toMatch(/per-ip/)
    expect((await verifyRoute({ explanation }, { token: org.key })).headers.get("ratelimit-policy")).toMatch(/per-ip/)
    expect((await verifyRoute({ explanation: { ...explanation, request_id: "someone else's" } })).body.valid).toBe(true)
  })

  it("answers 200 valid false for a tampered, an unsigned or an unknown-key explanation, later checks not checked", async () => {
    const explanation = await signedExplanation()
    const tampered = await verifyRoute({ explanation: { ...explanation, action: { ...explanation.action, status: "denied_by_policy" } } })
    expect(tampered.status).toBe(200)
    expect(tampered.body.valid).toBe(false)
    expect(tampered.body.checks).toMatchObject({ envelope_present: true, key_known: true, signature_valid: "not checked" })
    expect(tampered.body.checks.content_hash_matches).toEqual(expect.any(String))

    const { _envelope, ...unsigned } = explanation
    const bare = await verifyRoute({ explanation: unsigned })
    expect(bare.status).toBe(200)
    expect(bare.body).toMatchObject({ valid: false, signing_key_id: null, checks: { key_known: "not checked", content_hash_matches: "not checked", signature_valid: "not checked" } })
    expect(bare.body.checks.envelope_present).toEqual(expect.any(String))

    const stranger = await verifyRoute({ explanation: { ...explanation, _envelope: { ..._envelope, signing_key_id: "rk_0000000000000000" } } })
    expect(stranger.body).toMatchObject({ valid: false, signing_key_id: "rk_0000000000000000", checks: { envelope_present: true, content_hash_matches: "not checked" } })
    expect(stranger.body.checks.key_known).toEqual(expect.any(String))

    const forged = await verifyRoute({ explanation: { ...explanation, _envelope: { ..._envelope, signature: `ed25519:${Buffer.alloc(64, 7).toString("base64url")}` } } })
    expect(forged.body.valid).toBe(false)
    expect(forged.body.checks).toMatchObject({ content_hash_matches: true })
    expect(forged.body.checks.signature_valid).toEqual(expect.any(String))
  })

  it("refuses bodies it cannot read: 400 INVALID_JSON, 413 over 1 MiB, 422 without an explanation object", async () => {
    const explanationLike = { _envelope: {} }
    const broken = await call(server.url, "POST", "/api/v1/verify/explanation", { raw: "{not json" })
    expect(broken.status).toBe(400)
    expect(broken.body.code).toBe("INVALID_JSON")
    const huge = await call(server.url, "POST", "/api/v1/verify/explanation", { raw: JSON.stringify({ explanation: { pad: "x".repeat(1024 * 1024) } }) })
    expect(huge.status).toBe(413)
    expect(huge.body.code).toBe("PAYLOAD_TOO_LARGE")
    for (const body of [{}, { explanation: "text" }, { explanation: [1, 2] }, { explanation: null }, { something: 1 }, [explanationLike], "text", null, 42]) {
      const reply = await verifyRoute(body)
      expect(reply.status, JSON.stringify(body)).toBe(422)
      expect(reply.body.code).toBe("VALIDATION_ERROR")
    }
  })
})

describe("npm run verify on an explanation", () => {
  it("exits 0 on a real explanation (JWKS from its receipt's verify_url) and 1 after one byte changed", async () => {
    const actionUuid = await authorized(org, { action_type: uniqueType("cli.check") })
    await notarize(org, actionUuid)
    const text = (await explain(org.key, actionUuid)).text
    const dir = mkdtempSync(join(tmpdir(), "explanation-cli-"))
    const cli = (name: string, content: string) => {
      const file = join(dir, name)
      writeFileSync(file, content)
      // Asynchronous: the server runs in this process and must keep answering the CLI's JWKS fetch.
      return promisify(execFile)("npx", ["tsx", "scripts/verify.ts", file], { cwd: join(__dirname, "..") }).then(
        (result) => ({ code: 0, output: result.stdout + result.stderr }),
        (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout}${error.stderr}` })
      )
    }
    const good = await cli("explanation.json", text)
    expect(good.code, good.output).toBe(0)
    expect(good.output).toMatch(/ok {3}signature_valid/)
    // One byte of the action's type changed.
    const at = text.indexOf("cli.check") + 1
    const bad = await cli("tampered.json", text.slice(0, at) + (text[at] === "x" ? "y" : "x") + text.slice(at + 1))
    expect(bad.code, bad.output).toBe(1)
    expect(bad.output).toMatch(/FAIL content_hash_matches/)
  }, 60_000)
})
