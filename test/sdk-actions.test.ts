/**
 * The published SDKs against actions and receipt verification (CONTRACT-sdk-beyond §1 and the
 * action and receipt rows of §8): authorize with the replay context both SDKs send, its limits
 * (422), the idempotency comparison, `1.3` receipts for every terminal state of such an action
 * (`1.1` otherwise), GET /actions/{id}/replay-context, the keys the SDKs' types read on an action,
 * a page of actions, notarize and the verify answers. A property test recomputes
 * `replay_context_hash` here, with a canonicalization of its own, from what the gateway stored.
 */
import { createHash } from "node:crypto"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import type { AuthorizeRequest } from "../protocol/actions.js"
import { verifyReceipt } from "../protocol/verifier/index.js"
import { Actions } from "../src/actions/service.js"
import { newId } from "../src/platform/ids.js"
import { ReceiptMinter } from "../src/receipts/ports.js"
import { answer, client, type GatewayClient, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { receiptContent } from "./support/receipt-content.js"
import { Gateway } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/sdk-actions/Orgs") {}

const Setup = Layer.effect(Orgs, Effect.all({ org: register("SDK Actions Org"), other: register("SDK Other Org") })).pipe(Layer.provideMerge(Gateway.layer()))

/** Keeps the keys that have a value: both SDKs leave unset parameters out of the body. */
const sent = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null))

interface SdkAuthorize {
  readonly actionType: string
  readonly details: string
  readonly agentId?: string
  readonly agentVersion?: string
  readonly modelId?: string
  readonly modelVersion?: string
  readonly instructionHash?: string
  readonly idempotencyKey?: string
  readonly requireApproval?: boolean
  readonly systemPromptHash?: string
  readonly toolInputsHash?: string
  readonly modelParams?: Record<string, unknown>
  readonly executionEnv?: Record<string, unknown>
}

/** The body `authorize()` of the TypeScript SDK (3.4.0) posts: camelCase parameters under their wire names; false flags left out. */
const typescriptSdkBody = (p: SdkAuthorize) =>
  sent({
    action_type: p.actionType,
    details: p.details,
    agent_id: p.agentId,
    agent_version: p.agentVersion,
    instruction_hash: p.instructionHash,
    model_id: p.modelId,
    model_version: p.modelVersion,
    idempotency_key: p.idempotencyKey,
    require_approval: p.requireApproval || undefined,
    system_prompt_hash: p.systemPromptHash,
    tool_inputs_hash: p.toolInputsHash,
    model_params: p.modelParams,
    execution_env: p.executionEnv
  }) as AuthorizeRequest

/** The body `authorize()` of the Python SDK (3.2.0) posts: keyword arguments that are not None. */
const pythonSdkBody = (p: SdkAuthorize) =>
  sent({
    action_type: p.actionType,
    details: p.details,
    agent_id: p.agentId,
    agent_version: p.agentVersion,
    instruction_hash: p.instructionHash,
    model_id: p.modelId,
    model_version: p.modelVersion,
    idempotency_key: p.idempotencyKey,
    require_approval: p.requireApproval ? true : undefined,
    system_prompt_hash: p.systemPromptHash,
    tool_inputs_hash: p.toolInputsHash,
    model_params: p.modelParams,
    execution_env: p.executionEnv
  }) as AuthorizeRequest

const REPLAY = {
  systemPromptHash: `sha256:${"ab".repeat(32)}`,
  toolInputsHash: `sha256:${"cd".repeat(32)}`,
  modelParams: { temperature: 0.2, top_p: 1, seed: 42, stop: ["\n\n"] },
  executionEnv: { sdk_version: "3.4.0", framework: "langchain", framework_version: "0.3.1" }
}

/*
 * RFC 8785 written here, apart from the gateway's: keys sorted by UTF-16 code units, ECMAScript's
 * number and string forms (which JSON.stringify gives for one value), no whitespace.
 */
const jcs = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(jcs).join(",")}]`
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${jcs(record[key])}`)
      .join(",")}}`
  }
  return JSON.stringify(value)
}
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`

/** The replay context hash from the four fields as the gateway answers them. */
const recomputed = (stored: Record<string, unknown>) =>
  sha256(
    jcs({
      system_prompt_hash: stored.system_prompt_hash,
      tool_inputs_hash: stored.tool_inputs_hash,
      model_params: stored.model_params,
      execution_env: stored.execution_env
    })
  )

/** A new action, answered 201. */
const authorized = (api: GatewayClient, payload: AuthorizeRequest) =>
  Effect.gen(function* () {
    const [created, reply] = yield* api.actions.authorize({ headers: {}, payload, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return created
  })

/** The latest receipt of an action, as the public verify route answers it (keys as sent). */
const verifyAnswer = (actionUuid: string) =>
  Effect.gen(function* () {
    const [, reply] = yield* (yield* client()).receiptsPublic.verifyAction({ params: { action_uuid: actionUuid }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    return (yield* reply.json) as Record<string, any>
  })

/** GET /actions/{id} as sent (the typed client would drop keys its schema does not name). */
const detailAsSent = (api: GatewayClient, actionUuid: string) =>
  Effect.gen(function* () {
    const [, reply] = yield* api.actions.get({ params: { action_uuid: actionUuid }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    return (yield* reply.json) as Record<string, any>
  })

const replayAsSent = (api: GatewayClient, actionUuid: string) =>
  Effect.gen(function* () {
    const [, reply] = yield* api.actions.replayContext({ params: { action_uuid: actionUuid }, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(200)
    return (yield* reply.json) as Record<string, any>
  })

/** Every key the SDKs' action detail types read (TypeScript `ActionDetail`, Python `ActionDetail`). */
const DETAIL_KEYS = [
  "action_uuid", "org_uuid", "action_type", "action_details_hash", "agent_id", "agent_version", "model_id", "model_version", "instruction_hash",
  "details_storage_key", "parent_action_uuid", "status", "legal_hold", "created_at", "receipt", "authorizations", "request_id",
  "system_prompt_hash", "tool_inputs_hash", "model_params", "execution_env"
]
const RECEIPT_SUMMARY_KEYS = ["receipt_uuid", "payload_hash", "signature", "public_key_id", "timestamp_token", "receipt_version", "verify_url", "created_at"]
/** What a page item carries of the detail (CONTRACT-sdk-beyond §8), besides its own keys. */
const LIST_ITEM_KEYS = [
  "action_uuid", "action_type", "agent_id", "status", "legal_hold", "created_at", "org_uuid", "action_details_hash", "instruction_hash",
  "parent_action_uuid", "model_id", "receipt", "authorizations", "system_prompt_hash", "tool_inputs_hash", "model_params", "execution_env",
  "replay_context_hash"
]
const REPLAY_CONTEXT_KEYS = [
  "action_uuid", "system_prompt_hash", "tool_inputs_hash", "model_params", "execution_env", "model_id", "model_version", "agent_id", "agent_version",
  "instruction_hash", "replay_context_hash", "receipt_uuid", "receipt_version", "request_id"
]
/** The SDKs' `VerifyResult`. */
const VERIFY_KEYS = [
  "valid", "public_key_id", "message", "verified_at", "request_id", "receipt_uuid", "action_uuid", "payload_hash", "signature", "public_key", "algorithm",
  "timestamp_token", "signed_payload", "policy_evaluator_attestation"
]
/** The SDKs' notarize answer (`ActionReceipt`). */
const NOTARIZE_KEYS = ["action_uuid", "status", "created_at", "request_id", "receipt_uuid", "payload_hash", "signature", "timestamp_token", "output_scan_flags", "warnings"]

let counter = 0
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${++counter}`

/** A receipt of a 1.3 action checks out offline, and its hash is the one of the action's stored context. */
const expectReplayReceipt = (actionUuid: string, context: Record<string, unknown>, status: string) =>
  Effect.gen(function* () {
    const verification = yield* verifyAnswer(actionUuid)
    const payload = verification.signed_payload
    expect(payload.receipt_status).toBe(status)
    expect(payload.receipt_version).toBe("1.3")
    expect(payload.replay_context_hash).toBe(context.replay_context_hash)
    expect(payload.replay_context_hash).toBe(recomputed(context))
    expect(verification.valid).toBe(true)
    expect(verification.message).toBe("receipt is valid")
    const offline = verifyReceipt({
      signed_payload: payload,
      payload_hash: verification.payload_hash,
      signature: verification.signature,
      public_key: verification.public_key,
      timestamp_token: verification.timestamp_token,
      replay_context: context
    })
    expect(offline.errors).toEqual([])
    expect(offline.checks.replay_context).toBe(true)
    return verification
  })

liveLayer(Setup)((it) => {
  it.describe("replay context on authorize", () => {
    it.effect("stores what the TypeScript SDK sends, shows it on the action and its replay context, and signs a 1.3 receipt", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const body = typescriptSdkBody({
          actionType: "email.send",
          details: "Send the quarterly report to the board",
          agentId: "report-bot",
          agentVersion: "1.4.0",
          modelId: "claude-sonnet",
          modelVersion: "2026-01",
          instructionHash: `sha256:${"01".repeat(32)}`,
          ...REPLAY
        })
        const created = yield* authorized(api, body)
        expect(created.status).toBe("authorized")

        const detail = yield* detailAsSent(api, created.action_uuid)
        for (const key of DETAIL_KEYS) expect(detail, key).toHaveProperty(key)
        expect(detail).toMatchObject({
          system_prompt_hash: REPLAY.systemPromptHash,
          tool_inputs_hash: REPLAY.toolInputsHash,
          model_params: REPLAY.modelParams,
          execution_env: REPLAY.executionEnv,
          receipt: null,
          authorizations: []
        })
        expect(detail.replay_context_hash).toBe(recomputed(detail))

        const context = yield* replayAsSent(api, created.action_uuid)
        expect(Object.keys(context).sort()).toEqual([...REPLAY_CONTEXT_KEYS].sort())
        expect(context).toMatchObject({
          action_uuid: created.action_uuid,
          system_prompt_hash: REPLAY.systemPromptHash,
          tool_inputs_hash: REPLAY.toolInputsHash,
          model_params: REPLAY.modelParams,
          execution_env: REPLAY.executionEnv,
          model_id: "claude-sonnet",
          model_version: "2026-01",
          agent_id: "report-bot",
          agent_version: "1.4.0",
          instruction_hash: body.instruction_hash,
          replay_context_hash: detail.replay_context_hash,
          receipt_uuid: null,
          receipt_version: null
        })
        expect(context.request_id).toMatch(/^req_/)

        const [done, doneReply] = yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: { outcome: "completed" }, responseMode: "decoded-and-response" })
        expect(doneReply.status).toBe(200)
        const receipt = yield* expectReplayReceipt(created.action_uuid, context, "notarized")
        expect(receipt.receipt_uuid).toBe(done.receipt_uuid)
        const after = yield* replayAsSent(api, created.action_uuid)
        expect(after).toMatchObject({ receipt_uuid: done.receipt_uuid, receipt_version: "1.3", replay_context_hash: context.replay_context_hash })
        const detailAfter = yield* detailAsSent(api, created.action_uuid)
        for (const key of RECEIPT_SUMMARY_KEYS) expect(detailAfter.receipt, key).toHaveProperty(key)
        expect(detailAfter.receipt.receipt_version).toBe("1.3")

        // Offline, a context that differs from the one committed to does not check out.
        const tampered = verifyReceipt({
          signed_payload: receipt.signed_payload,
          payload_hash: receipt.payload_hash,
          signature: receipt.signature,
          public_key: receipt.public_key,
          replay_context: { ...context, model_params: { ...REPLAY.modelParams, temperature: 0.9 } }
        })
        expect(tampered.valid).toBe(false)
        expect(tampered.checks.replay_context).toBe(false)
      })
    )

    it.effect("takes the Python SDK's body (only some fields) and hashes the absent ones as null", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const created = yield* authorized(api, pythonSdkBody({ actionType: "db.query", details: "select 1", agentId: "py-agent", toolInputsHash: "tool-args-v1" }))
        const context = yield* replayAsSent(api, created.action_uuid)
        expect(context).toMatchObject({ system_prompt_hash: null, tool_inputs_hash: "tool-args-v1", model_params: null, execution_env: null })
        expect(context.replay_context_hash).toBe(sha256(jcs({ system_prompt_hash: null, tool_inputs_hash: "tool-args-v1", model_params: null, execution_env: null })))
        yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: { outcome: "failed", outcome_details: "timed out" } })
        yield* expectReplayReceipt(created.action_uuid, context, "failed")
      })
    )

    it.effect("without any of the four (or with all null) the action has none and its receipts stay 1.1", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        for (const body of [
          typescriptSdkBody({ actionType: "plain", details: "no context", agentId: "plain-bot" }),
          { action_type: "plain", details: "nulls", agent_id: "plain-bot", system_prompt_hash: null, tool_inputs_hash: null, model_params: null, execution_env: null }
        ] satisfies ReadonlyArray<AuthorizeRequest>) {
          const created = yield* authorized(api, body)
          const detail = yield* detailAsSent(api, created.action_uuid)
          expect(detail).toMatchObject({ system_prompt_hash: null, tool_inputs_hash: null, model_params: null, execution_env: null, replay_context_hash: null })
          yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: {} })
          const verification = yield* verifyAnswer(created.action_uuid)
          expect(verification.signed_payload.receipt_version).toBe("1.1")
          expect(verification.signed_payload).not.toHaveProperty("replay_context_hash")
          const context = yield* replayAsSent(api, created.action_uuid)
          expect(context).toMatchObject({ replay_context_hash: null, receipt_version: "1.1", receipt_uuid: verification.receipt_uuid })
          // Offline: a 1.1 receipt has nothing to check unless a context is claimed for it.
          const input = { signed_payload: verification.signed_payload, payload_hash: verification.payload_hash, signature: verification.signature, public_key: verification.public_key }
          expect(verifyReceipt(input).checks).not.toHaveProperty("replay_context")
          expect(verifyReceipt({ ...input, replay_context: { system_prompt_hash: "x" } }).checks.replay_context).toBe(false)
        }
      })
    )

    it.effect("mints 1.3 receipts for a policy denial, a human denial and an expiry of such an action", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const denyType = unique("replay.deny")
        const [, policyReply] = yield* api.policies.create({
          payload: { name: "no replays", mode: "rules", decision: "deny", conditions: [{ field: "action_type", op: "eq", value: denyType }], activate: true },
          responseMode: "decoded-and-response"
        })
        expect(policyReply.status).toBe(201)

        // Denied by policy: the 403 names the receipt.
        const refused = yield* answer(api.actions.authorize({ headers: {}, payload: typescriptSdkBody({ actionType: denyType, details: "x", agentId: "denied-bot", ...REPLAY }), responseMode: "response-only" }))
        expect(refused.status).toBe(403)
        expect(refused.body.code).toBe("POLICY_DENIED")
        const deniedContext = yield* replayAsSent(api, refused.body.details.action_uuid)
        expect(deniedContext.receipt_uuid).toBe(refused.body.details.receipt_uuid)
        yield* expectReplayReceipt(refused.body.details.action_uuid, deniedContext, "denied")

        // Denied by a human on the dashboard.
        const pending = yield* authorized(api, pythonSdkBody({ actionType: "wire", details: "pay", agentId: "human-bot", requireApproval: true, ...REPLAY }))
        expect(pending.status).toBe("pending_approval")
        const [, deniedReply] = yield* (yield* client(org.token)).actions.dashboardDeny({ params: { action_uuid: pending.action_uuid }, query: { reason: "no" }, responseMode: "decoded-and-response" })
        expect(deniedReply.status).toBe(200)
        yield* expectReplayReceipt(pending.action_uuid, yield* replayAsSent(api, pending.action_uuid), "denied_by_human")

        // Expired: its deadline moved into the past, then the sweep the service runs.
        const waiting = yield* authorized(api, typescriptSdkBody({ actionType: "wire", details: "pay later", agentId: "expiry-bot", requireApproval: true, ...REPLAY }))
        const expired = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`UPDATE actions SET approval_expires_at = now() - interval '1 second' WHERE action_uuid = ${waiting.action_uuid}`
              return yield* (yield* Actions).expireDue()
            })
          )
        )
        expect(expired).toBeGreaterThanOrEqual(1)
        const verification = yield* expectReplayReceipt(waiting.action_uuid, yield* replayAsSent(api, waiting.action_uuid), "denied_by_human")
        expect(verification.signed_payload.approval).toMatchObject({ via: "expiry", reason: "expired" })
      })
    )

    it.effect("refuses fields outside the limits with 422 VALIDATION_ERROR naming each", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        // Raw: these bodies are outside the contract, which the typed client refuses to encode.
        const post = (text: string) => raw("POST", "/api/v1/actions", { token: org.key, raw: text })
        const base = `"action_type":"t","details":"d"`
        const big = JSON.stringify({ blob: "x".repeat(16 * 1024) })
        const cases: ReadonlyArray<readonly [string, string]> = [
          [`{${base},"system_prompt_hash":""}`, "system_prompt_hash"],
          [`{${base},"tool_inputs_hash":"${"h".repeat(201)}"}`, "tool_inputs_hash"],
          [`{${base},"model_params":[1,2]}`, "model_params"],
          [`{${base},"execution_env":"python"}`, "execution_env"],
          [`{${base},"model_params":${big}}`, "model_params"],
          [`{${base},"model_params":{"temperature":1e400}}`, "model_params.temperature"],
          [`{${base},"execution_env":{"build":{"ids":[1,9007199254740994]}}}`, "execution_env.build.ids.1"]
        ]
        for (const [body, path] of cases) {
          const reply = yield* post(body)
          expect(reply.status, body.slice(0, 80)).toBe(422)
          expect(reply.body.code).toBe("VALIDATION_ERROR")
          expect(reply.body.details.issues.map((issue: { path: string }) => issue.path)).toContain(path)
        }
        // At the limits: 200 characters, 2^53, and an object of exactly 16 KiB as canonical JSON.
        const exact = JSON.stringify({ blob: "y".repeat(16 * 1024 - 11) })
        expect(new TextEncoder().encode(jcs(JSON.parse(exact))).length).toBe(16 * 1024)
        const fits = yield* post(`{${base},"system_prompt_hash":"${"h".repeat(200)}","model_params":${exact},"execution_env":{"n":9007199254740992,"f":0.1}}`)
        expect(fits.status).toBe(201)
      })
    )

    it.effect("compares the four fields with the rest of the body under one idempotency key", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const key = unique("idem")
        const first = yield* authorized(api, typescriptSdkBody({ actionType: "t", details: "d", idempotencyKey: key, ...REPLAY }))
        // Same fields, keys in another order: the same body.
        const reordered = { ...REPLAY, modelParams: Object.fromEntries(Object.entries(REPLAY.modelParams).reverse()) }
        const again = yield* authorized(api, pythonSdkBody({ actionType: "t", details: "d", idempotencyKey: key, ...reordered }))
        expect(again.action_uuid).toBe(first.action_uuid)
        const changed = yield* answer(
          api.actions.authorize({ headers: {}, payload: typescriptSdkBody({ actionType: "t", details: "d", idempotencyKey: key, ...REPLAY, executionEnv: { sdk_version: "3.5.0" } }), responseMode: "response-only" })
        )
        expect(changed.status).toBe(409)
        expect(changed.body.code).toBe("DUPLICATE_REQUEST")

        // null is absent: a body with the four null is the body without them.
        const plainKey = unique("idem-null")
        const plain = yield* authorized(api, { action_type: "t", details: "d", idempotency_key: plainKey })
        const withNulls = yield* authorized(api, { action_type: "t", details: "d", idempotency_key: plainKey, system_prompt_hash: null, model_params: null })
        expect(withNulls.action_uuid).toBe(plain.action_uuid)
        const withOne = yield* answer(api.actions.authorize({ headers: {}, payload: { action_type: "t", details: "d", idempotency_key: plainKey, tool_inputs_hash: "h" }, responseMode: "response-only" }))
        expect(withOne.status).toBe(409)
      })
    )

    it.effect("GET /actions/{id}/replay-context: 404 for another organization or an unknown id, 403 without actions:read", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const api = yield* client(org.key)
        const created = yield* authorized(api, typescriptSdkBody({ actionType: "t", details: "d", ...REPLAY }))
        const params = { action_uuid: created.action_uuid }
        for (const token of [other.key, other.token]) {
          const reply = yield* answer((yield* client(token)).actions.replayContext({ params, responseMode: "response-only" }))
          expect(reply.status).toBe(404)
          expect(reply.body.code).toBe("NOT_FOUND")
        }
        expect((yield* api.actions.replayContext({ params: { action_uuid: "act_missing" }, responseMode: "response-only" })).status).toBe(404)
        const [narrow] = yield* (yield* client(org.token)).apiKeys.create({ payload: { name: "receipts only", scopes: ["receipts:read"] }, responseMode: "decoded-and-response" })
        const forbidden = yield* answer((yield* client(narrow.key)).actions.replayContext({ params, responseMode: "response-only" }))
        expect(forbidden.status).toBe(403)
        expect(forbidden.body.code).toBe("FORBIDDEN")
        // The JWT of the dashboard reads it too.
        expect((yield* replayAsSent(yield* client(org.token), created.action_uuid)).replay_context_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
      })
    )

    it.effect("replay_context_hash, recomputed here from the stored fields, always matches the action's and its receipt's", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const runWith = Effect.runPromiseWith(yield* Effect.context<Gateway>())
        const safeNumber = fc.oneof(
          fc.integer(),
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n) || Math.abs(n) <= 2 ** 53),
          fc.constantFrom(0, -0, 2 ** 53, -(2 ** 53), 1e-7, 123456.789, 5e-324)
        )
        const text = fc.string({ unit: "grapheme", maxLength: 12 }).filter((s) => !s.includes("\u0000"))
        const key = text.filter((s) => s !== "__proto__")
        const { json } = fc.letrec((tie) => ({
          json: fc.oneof({ depthSize: "small", maxDepth: 3 }, fc.constant(null), fc.boolean(), safeNumber, text, fc.array(tie("json"), { maxLength: 4 }), tie("object")),
          object: fc.dictionary(key, tie("json"), { maxKeys: 4 })
        }))
        const object = fc.dictionary(key, json, { maxKeys: 5 }) as fc.Arbitrary<Record<string, unknown>>
        const hash = fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 }).filter((s) => !s.includes("\u0000"))
        const context = fc
          .record({
            system_prompt_hash: fc.option(hash, { nil: undefined }),
            tool_inputs_hash: fc.option(hash, { nil: undefined }),
            model_params: fc.option(object, { nil: undefined }),
            execution_env: fc.option(object, { nil: undefined })
          })
          .filter((fields) => Object.values(fields).some((value) => value !== undefined))

        const property = (fields: Record<string, unknown>) =>
          Effect.gen(function* () {
            const created = yield* authorized(api, { action_type: "prop", details: "p", agent_id: "prop-bot", ...sent(fields) })
            const stored = yield* replayAsSent(api, created.action_uuid)
            expect(stored.replay_context_hash).toBe(recomputed(stored))
            yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: {} })
            const verification = yield* verifyAnswer(created.action_uuid)
            expect(verification.signed_payload.replay_context_hash).toBe(recomputed(stored))
            expect(verification.signed_payload.receipt_version).toBe("1.3")
          })
        yield* Effect.promise(() => fc.assert(fc.asyncProperty(context, (fields) => runWith(property(fields))), { numRuns: 25 }))
      }),
      180_000
    )
  })

  it.describe("actions as the SDKs read them", () => {
    it.effect("a page of GET /actions carries the detail's keys, each as the detail answers it, cosignatures included", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const type = unique("listed")
        const agent = unique("list-bot")
        const [, registered] = yield* api.agents.register({ payload: { agent_slug: agent, name: "List bot" }, responseMode: "decoded-and-response" })
        expect(registered.status).toBe(201)
        const cosigned = yield* authorized(api, typescriptSdkBody({ actionType: type, details: "one", agentId: agent, ...REPLAY }))
        const [cosignature, cosignReply] = yield* (yield* client(org.token)).actions.cosign({ params: { action_uuid: cosigned.action_uuid }, responseMode: "decoded-and-response" })
        expect(cosignReply.status).toBe(200)
        yield* api.actions.notarize({ params: { action_uuid: cosigned.action_uuid }, payload: {} })
        const parent = (yield* authorized(api, pythonSdkBody({ actionType: type, details: "two", agentId: agent }))).action_uuid
        yield* authorized(api, { action_type: type, details: "three", parent_action_uuid: parent, instruction_hash: "sha256:ii" })

        const [, pageReply] = yield* api.actions.list({ query: { action_type: type }, responseMode: "decoded-and-response" })
        expect(pageReply.status).toBe(200)
        const page = (yield* pageReply.json) as { data: Array<Record<string, any>>; actions: Array<Record<string, any>>; pagination: Record<string, unknown> }
        expect(page.data).toHaveLength(3)
        expect(page.actions).toEqual(page.data)
        for (const item of page.data) {
          expect(Object.keys(item).sort()).toEqual([...LIST_ITEM_KEYS].sort())
          const detail = yield* detailAsSent(api, item.action_uuid)
          for (const key of LIST_ITEM_KEYS) expect(item[key], key).toEqual(detail[key])
        }
        const listedCosigned = page.data.find((item) => item.action_uuid === cosigned.action_uuid)!
        expect(listedCosigned.receipt.receipt_version).toBe("1.3")
        expect(listedCosigned.authorizations).toEqual([
          {
            cosignature_uuid: cosignature.cosignature_uuid,
            action_uuid: cosigned.action_uuid,
            cosigner_email: cosignature.cosigner_email,
            cosigned_at: cosignature.cosigned_at,
            id: cosignature.cosignature_uuid,
            authorizer_email: cosignature.cosigner_email,
            authorized_at: cosignature.cosigned_at
          }
        ])
        expect(page.data.find((item) => item.parent_action_uuid === parent)).toMatchObject({ instruction_hash: "sha256:ii", receipt: null, authorizations: [] })
        // The agents area's page of an agent's actions is the same list.
        const [, agentReply] = yield* api.agents.actions({ params: { agent_slug: agent }, query: {}, responseMode: "decoded-and-response" })
        expect(agentReply.status).toBe(200)
        const agentPage = (yield* agentReply.json) as { data: Array<Record<string, any>> }
        expect(agentPage.data.find((item) => item.action_uuid === cosigned.action_uuid)).toEqual(listedCosigned)
      })
    )

    it.effect("notarize answers output_scan_flags in the SDKs' form: the hits of the scan, or null when no scan ran", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const notarized = (details?: string) =>
          Effect.gen(function* () {
            const created = yield* authorized(api, typescriptSdkBody({ actionType: "mail", details: "d" }))
            const [, reply] = yield* api.actions.notarize({
              params: { action_uuid: created.action_uuid },
              payload: details === undefined ? { outcome: "completed" } : { outcome: "completed", outcome_details: details },
              responseMode: "decoded-and-response"
            })
            expect(reply.status).toBe(200)
            const body = (yield* reply.json) as Record<string, any>
            expect(Object.keys(body).sort()).toEqual([...NOTARIZE_KEYS, "public_key_id"].sort())
            return body
          })
        const before = Date.now()
        const flagged = yield* notarized("Sent to jane.doe@example.com and bob@example.org")
        const report = flagged.output_scan_flags
        expect(report).toEqual({
          scanned_at: expect.any(String),
          libraries: ["credentials", "pii"],
          mode: "flag",
          decision: "allow",
          worst_severity: "warning",
          hits: [{ name: "email", library: "pii", severity: "warning", description: "E-mail address", matches: 2, sample: "[REDACTED]" }]
        })
        expect(Date.parse(report.scanned_at)).toBeGreaterThanOrEqual(before - 1000)
        expect(JSON.stringify(flagged)).not.toContain("jane.doe")
        // The receipt keeps its own form of the flags.
        const receipt = yield* verifyAnswer(flagged.action_uuid)
        expect(receipt.signed_payload.output_scan_flags).toEqual([{ entity_type: "email", severity: "warning", library: "pii", count: 2 }])

        const clean = yield* notarized("all fine")
        expect(clean.output_scan_flags).toMatchObject({ decision: "allow", worst_severity: null, hits: [] })
        expect((yield* notarized()).output_scan_flags).toBeNull()

        const [, off] = yield* (yield* client(org.token)).outputPolicies.update({ payload: { enabled: false }, responseMode: "decoded-and-response" })
        expect(off.status).toBe(200)
        expect((yield* notarized("jane.doe@example.com")).output_scan_flags).toBeNull()
        yield* (yield* client(org.token)).outputPolicies.update({ payload: { enabled: true } })
      })
    )

    it.effect("the verify answers carry message and policy_evaluator_attestation, by action and by receipt", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const { org } = yield* Orgs
        const api = yield* client(org.key)
        const created = yield* authorized(api, typescriptSdkBody({ actionType: "t", details: "d", agentId: "verify-bot" }))
        const done = yield* api.actions.notarize({ params: { action_uuid: created.action_uuid }, payload: {} })
        const anonymous = yield* client()
        const byReceipt = yield* anonymous.receiptsPublic.verifyReceipt({ params: { receipt_uuid: done.receipt_uuid }, responseMode: "decoded-and-response" })
        for (const body of [yield* verifyAnswer(created.action_uuid), (yield* byReceipt[1].json) as Record<string, any>]) {
          for (const key of VERIFY_KEYS) expect(body, key).toHaveProperty(key)
          expect(body).toMatchObject({ valid: true, message: "receipt is valid", policy_evaluator_attestation: null })
        }

        // A receipt whose chain link is wrong (minted directly, as a forged or corrupted chain would be).
        const content = (sequence: number, previous: string | null) =>
          receiptContent({ action_uuid: newId("act"), org_uuid: org.orgUuid, agent_id: unique("broken-chain"), agent_sequence: sequence, previous_payload_hash: previous })
        const broken = yield* Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const minter = yield* ReceiptMinter
              const signed = yield* minter.sign(content(2, `sha256:${"11".repeat(32)}`))
              yield* sql`${minter.insertion(signed)}`
              return signed.minted
            })
          )
        )
        const [verdict, verdictReply] = yield* anonymous.receiptsPublic.verifyReceipt({ params: { receipt_uuid: broken.receipt_uuid }, responseMode: "decoded-and-response" })
        expect(verdict.valid).toBe(false)
        expect((yield* verdictReply.json) as Record<string, unknown>).toMatchObject({ message: "receipt is not valid: chain", policy_evaluator_attestation: null })
      })
    )
  })
})
