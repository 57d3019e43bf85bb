/**
 * Escrow end to end over HTTP (spec 001 "Escrow"): accounts with their currency and agent checks,
 * deposits and releases with exact decimal strings, fees and signed receipts verifiable with the
 * JWKS, 100 concurrent movements on one account through two servers, disputes that freeze it (signature, evidence)
 * and their resolution by an owner or admin, other organizations' 404s and key scopes. Over the
 * typed client (HttpApiClient over GatewayApi); bodies and queries outside the contract go raw (`raw`).
 */
import { createHash, createHmac, createPublicKey, randomUUID, verify } from "node:crypto"
import { expect } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient } from "effect/sql"
import type { CreateAccountRequest, DisputeRequest, MovementRequest, ResolveDisputeRequest } from "../protocol/escrow.js"
import { loadConfig } from "../src/platform/config.js"
import { answer, client, clientAt, member, raw, register } from "./support/api.js"
import type { Org } from "./support/client.js"
import { liveLayer } from "./support/effect.js"
import { Gateway, startServer } from "./support/server.js"

class Orgs extends Context.Service<Orgs, { readonly org: Org; readonly other: Org }>()("test/escrow/Orgs") {}

// 2.5 % on releases, so the fee arithmetic shows in every release below.
const Setup = Layer.effect(Orgs, Effect.all({ org: register("Escrow Org"), other: register("Other Escrow Org") })).pipe(
  Layer.provideMerge(Gateway.layer({ ESCROW_FEE_BASIS_POINTS: "250" }))
)

const PATH = "/api/v1/escrow/accounts"
let slugCounter = 0
const uniqueSlug = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++slugCounter}`

const escrow = (token: string) => Effect.map(client(token), (api) => api.escrow)
const accountParams = (account: string) => ({ account_uuid: account })
/* Each as answered (status and JSON body as sent). */
const createAccount = (token: string, payload: CreateAccountRequest = {}) =>
  Effect.flatMap(escrow(token), (api) => answer(api.create({ payload, responseMode: "response-only" })))
const deposit = (token: string, account: string, payload: MovementRequest) =>
  Effect.flatMap(escrow(token), (api) => answer(api.deposit({ params: accountParams(account), payload, responseMode: "response-only" })))
const release = (token: string, account: string, payload: MovementRequest) =>
  Effect.flatMap(escrow(token), (api) => answer(api.release({ params: accountParams(account), payload, responseMode: "response-only" })))
const dispute = (token: string, account: string, payload: DisputeRequest) =>
  Effect.flatMap(escrow(token), (api) => answer(api.dispute({ params: accountParams(account), payload, responseMode: "response-only" })))
const resolve = (token: string, account: string, payload: ResolveDisputeRequest) =>
  Effect.flatMap(escrow(token), (api) => answer(api.resolveDispute({ params: accountParams(account), payload, responseMode: "response-only" })))
const getAccount = (token: string, account: string) => Effect.flatMap(escrow(token), (api) => api.get({ params: accountParams(account) }))


const newAccount = (payload: CreateAccountRequest = {}) =>
  Effect.gen(function* () {
    const { org } = yield* Orgs
    const [account, reply] = yield* (yield* escrow(org.key)).create({ payload, responseMode: "decoded-and-response" })
    expect(reply.status).toBe(201)
    return account.account_uuid
  })

/** Checks a receipt offline: payload hash, and the Ed25519 signature by the JWKS key it names. */
const verifyReceipt = (receipt: { readonly public_key_id: string; readonly signed_payload: string; readonly payload_hash: string; readonly signature: string }) =>
  Effect.gen(function* () {
    const jwks = yield* (yield* client()).receiptsPublic.jwks({})
    const jwk = jwks.keys.find((key) => key.kid === receipt.public_key_id)
    expect(jwk).toBeDefined()
    const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk!.x }, format: "jwk" })
    const bytes = Buffer.from(receipt.signed_payload, "utf8")
    expect(receipt.payload_hash).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`)
    expect(verify(null, bytes, publicKey, Buffer.from(receipt.signature.slice("ed25519:".length), "base64url"))).toBe(true)
    return JSON.parse(receipt.signed_payload)
  })

const disputeSignature = (credential: string, terms: { account_uuid: string; amount: string; reason: string; evidence_package_uuid: string | null }) =>
  // JSON.stringify of keys in sorted order is the JCS of these plain strings.
  `hmac-sha256:${createHmac("sha256", credential)
    .update(JSON.stringify({ account_uuid: terms.account_uuid, amount: terms.amount, evidence_package_uuid: terms.evidence_package_uuid, reason: terms.reason }))
    .digest("hex")}`

/** The body as sent without its request_id (what a later read of the same record answers). */
const withoutRequestId = (body: any) => {
  const { request_id: _requestId, ...rest } = body
  return rest
}

liveLayer(Setup)((it) => {
  it.describe("accounts", () => {
    it.effect("creates an account: EUR by default, balance 0.00, active; unknown fields ignored", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        // Raw: a field outside the contract (ignored by the server), and request_id, which the decoder drops.
        const reply = yield* raw("POST", PATH, { token: org.key, body: {
          purpose: "Hold the supplier's deposit",
          counterparty_org_uuid: other.orgUuid,
          counterparty: { name: "Supplier Ltd", identifier: "GB123", type: "organization" },
          unexpected: true
        } })
        expect(reply.status).toBe(201)
        expect(reply.body).toMatchObject({
          currency: "EUR",
          purpose: "Hold the supplier's deposit",
          agent_id: null,
          balance: "0.00",
          status: "active",
          counterparty_org_uuid: other.orgUuid,
          counterparty: { name: "Supplier Ltd", identifier: "GB123", type: "organization" },
          transaction_count: 0
        })
        expect(reply.body.account_uuid).toMatch(/^[0-9a-f-]{36}$/)
        expect(typeof reply.body.request_id).toBe("string")
        const [got, gotReply] = yield* (yield* escrow(org.key)).get({ params: accountParams(reply.body.account_uuid), responseMode: "decoded-and-response" })
        expect(gotReply.status).toBe(200)
        expect(got).toMatchObject({ account_uuid: reply.body.account_uuid, balance: "0.00", transactions: [], disputes: [] })
      })
    )

    it.effect("answers balances with the currency's ISO 4217 digits; unknown currencies are 400 UNSUPPORTED_CURRENCY", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        expect((yield* createAccount(org.key, { currency: "JPY" })).body.balance).toBe("0")
        expect((yield* createAccount(org.key, { currency: "kwd" })).body).toMatchObject({ currency: "KWD", balance: "0.000" })
        for (const currency of ["ABC", "XXX", "EURO", "", "€"]) {
          const reply = yield* createAccount(org.key, { currency })
          expect(reply.status, currency).toBe(400)
          expect(reply.body.code, currency).toBe("UNSUPPORTED_CURRENCY")
        }
      })
    )

    it.effect("agent_id must be an active agent of the caller's organization", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const agents = (yield* client(org.key)).agents
        const slug = uniqueSlug("payer")
        expect((yield* agents.register({ payload: { agent_slug: slug, name: "Payer" }, responseMode: "response-only" })).status).toBe(201)
        const [linked, linkedReply] = yield* (yield* escrow(org.key)).create({ payload: { agent_id: slug }, responseMode: "decoded-and-response" })
        expect(linkedReply.status).toBe(201)
        expect(linked.agent_id).toBe(slug)

        const unknown = yield* createAccount(org.key, { agent_id: uniqueSlug("nobody") })
        expect(unknown.status).toBe(404)
        expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
        // Another organization's agent is not found either.
        const foreign = yield* createAccount(other.key, { agent_id: slug })
        expect(foreign.status).toBe(404)
        expect(foreign.body.code).toBe("AGENT_NOT_FOUND")

        yield* agents.decommission({ params: { agent_slug: slug }, payload: { reason: "retired" }, responseMode: "response-only" })
        const retired = yield* createAccount(org.key, { agent_id: slug })
        expect(retired.status).toBe(422)
        expect(retired.body.code).toBe("AGENT_DECOMMISSIONED")
      })
    )

    it.effect("lists the organization's accounts, newest first, under accounts and data", () =>
      Effect.gen(function* () {
        const { other } = yield* Orgs
        const fresh = yield* register("Escrow List Org")
        const api = yield* escrow(fresh.key)
        const ids: Array<string> = []
        for (const purpose of ["a", "b", "c"]) ids.push((yield* api.create({ payload: { purpose } })).account_uuid)
        const [page, pageReply] = yield* api.list({ query: { per_page: 2 }, responseMode: "decoded-and-response" })
        expect(pageReply.status).toBe(200)
        expect(page.pagination).toEqual({ page: 1, per_page: 2, total: 3, has_more: true })
        expect(page.accounts).toEqual(page.data)
        expect(page.accounts.map((account) => account.account_uuid)).toEqual([ids[2], ids[1]])
        // The keys as sent (the decoder would drop any others): the spec's, and the published SDKs' `id`.
        const sent = (yield* pageReply.json) as { accounts: Array<object> }
        expect(Object.keys(sent.accounts[0]!).sort()).toEqual(["account_uuid", "agent_id", "balance", "created_at", "currency", "id", "purpose", "status"])
        const second = yield* api.list({ query: { page: 2, per_page: 2 } })
        expect(second.accounts.map((account) => account.account_uuid)).toEqual([ids[0]])
        // Raw: page and per_page outside the contract's ranges.
        for (const query of ["per_page=101", "per_page=0", "page=0"]) {
          expect((yield* raw("GET", `${PATH}?${query}`, { token: fresh.key })).status, query).toBe(422)
        }
        const foreign = yield* (yield* escrow(other.key)).list({ query: {} })
        expect(foreign.accounts.map((account) => account.account_uuid)).not.toContain(ids[0])
      })
    )
  })

  it.describe("deposits and releases", () => {
    it.effect("deposits (201) and releases (200) with exact decimal strings, fee and net_release, and signed, chained receipts", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* escrow(org.key)
        const account = yield* newAccount({ purpose: "ledger" })
        const params = accountParams(account)
        const [first, firstReply] = yield* api.deposit({
          params,
          payload: { amount: "100.00", description: "initial", reference: "INV-1", signature: "ignored" },
          responseMode: "decoded-and-response"
        })
        expect(firstReply.status).toBe(201)
        expect(first).toMatchObject({
          account_uuid: account,
          type: "deposit",
          amount: "100.00",
          currency: "EUR",
          balance_after: "100.00",
          description: "initial",
          reference: "INV-1",
          reference_action_uuid: null,
          sequence: 1
        })
        expect(first).toMatchObject({ fee: null, net_release: null })
        expect(first.transaction_id).toMatch(/^etx_/)
        expect(first.receipt).toMatchObject({ receipt_uuid: expect.stringMatching(/^rct_/), receipt_version: "1.0", timestamp: first.created_at })

        // A JSON number is read through its shortest decimal text: 100.5 → "100.50".
        const [second, secondReply] = yield* api.deposit({ params, payload: { amount: 100.5, reference_action_uuid: "act_123" }, responseMode: "decoded-and-response" })
        expect(secondReply.status).toBe(201)
        expect(second).toMatchObject({ amount: "100.50", balance_after: "200.50", reference: "act_123", reference_action_uuid: "act_123", sequence: 2 })

        const [paid, paidReply] = yield* api.release({ params, payload: { amount: "40.10", description: "milestone 1" }, responseMode: "decoded-and-response" })
        expect(paidReply.status).toBe(200)
        // 2.5 % of 40.10 = 1.0025 → 1.00; the balance drops by the gross amount.
        expect(paid).toMatchObject({ type: "release", amount: "40.10", fee: "1.00", net_release: "39.10", balance_after: "160.40", sequence: 3 })
        const half = yield* api.release({ params, payload: { amount: "0.20" } })
        // 2.5 % of 0.20 = 0.005 → 0.01 (half up).
        expect(half).toMatchObject({ fee: "0.01", net_release: "0.19", balance_after: "160.20" })

        const payloads = []
        for (const movement of [first, second, paid, half]) payloads.push(yield* verifyReceipt(movement.receipt))
        expect(payloads[0]).toMatchObject({
          receipt_type: "escrow_transaction",
          receipt_uuid: first.receipt.receipt_uuid,
          transaction_id: first.transaction_id,
          account_uuid: account,
          org_uuid: org.orgUuid,
          type: "deposit",
          amount: "100.00",
          fee: null,
          net_release: null,
          balance_after: "100.00",
          currency: "EUR",
          reference: "INV-1",
          sequence: 1,
          previous_payload_hash: null
        })
        expect(payloads[2]).toMatchObject({ type: "release", amount: "40.10", fee: "1.00", net_release: "39.10", balance_after: "160.40" })
        // Each signed record names the one before it.
        for (const [index, before] of [first, second, paid].entries()) expect(payloads[index + 1].previous_payload_hash).toBe(before.receipt.payload_hash)

        const [got, gotReply] = yield* api.get({ params, responseMode: "decoded-and-response" })
        expect(got).toMatchObject({ balance: "160.20", status: "active", transaction_count: 4 })
        // Newest first, with the very receipts the movements answered.
        expect(got.transactions.map((t) => t.transaction_id)).toEqual([half, paid, second, first].map((movement) => movement.transaction_id))
        expect(got.transactions[3]!.receipt).toEqual(first.receipt)
        // Compared as sent, every key included.
        expect(((yield* gotReply.json) as any).transactions[1]).toEqual(withoutRequestId(yield* paidReply.json))

        const [paged, pagedReply] = yield* api.transactions({ params, query: { per_page: 3 }, responseMode: "decoded-and-response" })
        expect(pagedReply.status).toBe(200)
        expect(paged.pagination).toEqual({ page: 1, per_page: 3, total: 4, has_more: true })
        expect(paged.transactions).toEqual(paged.data)
        expect(paged.transactions[0]!.transaction_id).toBe(half.transaction_id)
      })
    )

    it.effect("refuses bad amounts with 400 INVALID_AMOUNT, a missing one with 422, and overdrafts with 400 INSUFFICIENT_BALANCE", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const account = yield* newAccount()
        for (const amount of ["0", "0.00", "-5.00", "1.001", "abc", "1e3", "", " 1", 0, -1, 0.001, 1e21, "9".repeat(30)]) {
          const reply = yield* deposit(org.key, account, { amount })
          expect([amount, reply.status, reply.body.code]).toEqual([amount, 400, "INVALID_AMOUNT"])
        }
        // Raw: no amount, or a boolean one, is outside the contract.
        expect((yield* raw("POST", `${PATH}/${account}/deposit`, { token: org.key, body: {} })).status).toBe(422)
        expect((yield* raw("POST", `${PATH}/${account}/deposit`, { token: org.key, body: { amount: true } })).status).toBe(422)
        expect((yield* deposit(org.key, account, { amount: "10.00" })).status).toBe(201)
        const over = yield* release(org.key, account, { amount: "10.01" })
        expect(over.status).toBe(400)
        expect(over.body).toMatchObject({ code: "INSUFFICIENT_BALANCE", details: { balance: "10.00", amount: "10.01" } })
        expect((yield* release(org.key, account, { amount: "1.005" })).body.code).toBe("INVALID_AMOUNT")
        const all = yield* release(org.key, account, { amount: "10" })
        expect(all.body).toMatchObject({ amount: "10.00", fee: "0.25", net_release: "9.75", balance_after: "0.00" })
        expect((yield* getAccount(org.key, account)).balance).toBe("0.00")

        const yen = yield* newAccount({ currency: "JPY" })
        expect((yield* deposit(org.key, yen, { amount: "1.5" })).body.code).toBe("INVALID_AMOUNT")
        expect((yield* deposit(org.key, yen, { amount: 1500 })).body).toMatchObject({ amount: "1500", balance_after: "1500" })
      })
    )

    it.effect(
      "100 concurrent deposits and releases on one account, through two servers on one database, leave the exact balance and never go negative",
      () =>
        Effect.gen(function* () {
          const server = yield* Gateway
          const { org } = yield* Orgs
          const api = yield* escrow(org.key)
          const account = yield* newAccount()
          const params = accountParams(account)
          expect((yield* deposit(org.key, account, { amount: "5.00" })).status).toBe(201)
          const moves = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? { kind: "deposit" as const, amount: "1.25" } : { kind: "release" as const, amount: "3.00" }))
          // A second server on the same database: the per-account lock is Postgres's, not a process's.
          const replies = yield* Effect.acquireUseRelease(
            Effect.promise(() => startServer({ DATABASE_URL: server.config.databaseUrl!, ESCROW_FEE_BASIS_POINTS: "250" })),
            (twin) =>
              Effect.gen(function* () {
                const twinApi = (yield* clientAt(twin.url, org.key)).escrow
                return yield* Effect.all(
                  moves.map((move, i) => {
                    const target = i % 4 < 2 ? api : twinApi
                    return answer(target[move.kind]({ params, payload: { amount: move.amount }, responseMode: "response-only" }))
                  }),
                  { concurrency: "unbounded" }
                )
              }),
            (twin) => Effect.promise(() => twin.stop())
          )
          let expected = 500n
          for (const [i, reply] of replies.entries()) {
            if (moves[i]!.kind === "deposit") {
              expect(reply.status).toBe(201)
              expected += 125n
            } else if (reply.status === 200) {
              expected -= 300n
            } else {
              expect([reply.status, reply.body.code]).toEqual([400, "INSUFFICIENT_BALANCE"])
            }
          }
          const refused = replies.filter((reply) => reply.status === 400).length
          // 5.00 + 50 × 1.25 cannot cover 50 × 3.00: at least 28 releases must be refused, and the first one served succeeds.
          expect(refused).toBeGreaterThanOrEqual(28)
          expect(refused).toBeLessThan(50)
          const got = yield* getAccount(org.key, account)
          const cents = (text: string) => BigInt(text.replace(".", ""))
          expect(cents(got.balance)).toBe(expected)
          expect(got.transaction_count).toBe(101 - refused)

          // Replaying the ledger in its order gives every balance_after, none negative, sequences without a gap.
          const page = yield* api.transactions({ params, query: { per_page: 100 } })
          const rest = yield* api.transactions({ params, query: { per_page: 100, page: 2 } })
          const ledger = [...page.transactions, ...rest.transactions].reverse()
          let running = 0n
          for (const [index, entry] of ledger.entries()) {
            expect(entry.sequence).toBe(index + 1)
            running += entry.type === "deposit" ? cents(entry.amount) : -cents(entry.amount)
            expect(cents(entry.balance_after)).toBe(running)
            expect(running >= 0n).toBe(true)
          }
          expect(running).toBe(expected)
        }),
      60_000
    )
  })

  it.describe("disputes", () => {
    it.effect("a dispute freezes the account: then a deposit or release is 409 ACCOUNT_FROZEN and a second dispute 409 DISPUTE_ALREADY_OPEN", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const api = yield* escrow(org.key)
        const account = yield* newAccount()
        yield* deposit(org.key, account, { amount: "50.00" })
        const [opened, openedReply] = yield* api.dispute({
          params: accountParams(account),
          payload: { amount: "20.00", description: "Goods not delivered", reference_action_uuid: "act_9" },
          responseMode: "decoded-and-response"
        })
        expect(openedReply.status).toBe(200)
        expect(opened).toMatchObject({
          account_uuid: account,
          amount: "20.00",
          currency: "EUR",
          reason: "Goods not delivered",
          description: "Goods not delivered",
          reference_action_uuid: "act_9",
          status: "open",
          account_status: "frozen",
          evidence_package_uuid: null,
          opened_by: org.userUuid,
          resolution: null,
          resolution_receipt: null
        })
        expect(opened.dispute_id).toMatch(/^dsp_/)
        const signedPayload = yield* verifyReceipt(opened.receipt)
        expect(signedPayload).toMatchObject({ receipt_type: "escrow_dispute", dispute_id: opened.dispute_id, status: "open", account_status: "frozen", balance: "50.00", sequence: 2 })

        const blocked = yield* deposit(org.key, account, { amount: "1.00" })
        expect(blocked.status).toBe(409)
        expect(blocked.body.code).toBe("ACCOUNT_FROZEN")
        expect((yield* release(org.key, account, { amount: "1.00" })).body.code).toBe("ACCOUNT_FROZEN")
        const again = yield* dispute(org.key, account, { amount: "1.00", reason: "again" })
        expect(again.status).toBe(409)
        expect(again.body.code).toBe("DISPUTE_ALREADY_OPEN")

        const [got, gotReply] = yield* api.get({ params: accountParams(account), responseMode: "decoded-and-response" })
        expect(got).toMatchObject({ status: "frozen", balance: "50.00" })
        // Compared as sent, every key included.
        expect(((yield* gotReply.json) as any).disputes).toEqual([withoutRequestId(yield* openedReply.json)])
        expect((yield* api.list({ query: {} })).accounts.find((a) => a.account_uuid === account)!.status).toBe("frozen")
      })
    )

    it.effect("needs a reason or description (422) and a valid amount (400); the SDK's reason is accepted", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const account = yield* newAccount()
        const missing = yield* dispute(org.key, account, { amount: "1.00" })
        expect(missing.status).toBe(422)
        // The spec's field is named; a caller who used the SDK's `reason` is told about `reason`.
        expect(missing.body.details.issues.map((issue: { path: string }) => issue.path)).toEqual(["description"])
        const blankReason = yield* dispute(org.key, account, { amount: "1.00", reason: " " })
        expect(blankReason.status).toBe(422)
        expect(blankReason.body.details.issues.map((issue: { path: string }) => issue.path)).toEqual(["reason"])
        // Raw: a dispute without an amount is outside the contract.
        expect((yield* raw("POST", `${PATH}/${account}/dispute`, { token: org.key, body: { reason: "no amount" } })).status).toBe(422)
        expect((yield* dispute(org.key, account, { amount: "0", reason: "zero" })).body.code).toBe("INVALID_AMOUNT")
        const [sdk, sdkReply] = yield* (yield* escrow(org.key)).dispute({
          params: accountParams(account),
          payload: { amount: 12.5, reason: "Late delivery" },
          responseMode: "decoded-and-response"
        })
        expect(sdkReply.status).toBe(200)
        expect(sdk).toMatchObject({ amount: "12.50", reason: "Late delivery", description: null })
      })
    )

    it.effect("checks an optional signature (400 INVALID_SIGNATURE) and an optional evidence package (404 EVIDENCE_NOT_FOUND)", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const account = yield* newAccount()
        const terms = { account_uuid: account, amount: "20.00", reason: "Defective", evidence_package_uuid: null }
        const forged = yield* dispute(org.key, account, { amount: "20", reason: "Defective", signature: disputeSignature("not-my-key", terms) })
        expect(forged.status).toBe(400)
        expect(forged.body.code).toBe("INVALID_SIGNATURE")
        const otherTerms = yield* dispute(org.key, account, { amount: "20", reason: "Defective", signature: disputeSignature(org.key, { ...terms, amount: "21.00" }) })
        expect(otherTerms.body.code).toBe("INVALID_SIGNATURE")

        const missing = randomUUID()
        const noEvidence = yield* dispute(org.key, account, { amount: "20", reason: "Defective", evidence_package_uuid: missing })
        expect(noEvidence.status).toBe(404)
        expect(noEvidence.body.code).toBe("EVIDENCE_NOT_FOUND")
        expect((yield* dispute(org.key, account, { amount: "20", reason: "Defective", evidence_package_uuid: "not-a-uuid" })).body.code).toBe("EVIDENCE_NOT_FOUND")

        // One evidence package of each organization, sealed through the evidence area.
        const packageOf = (owner: { key: string }) =>
          Effect.gen(function* () {
            const api = yield* client(owner.key)
            const action = yield* api.actions.authorize({ headers: {}, payload: { action_type: "refund", details: "disputed order" } })
            const [sealed, sealedReply] = yield* api.evidence.createPackage({
              payload: { action_uuids: [action.action_uuid], title: "dispute evidence" },
              responseMode: "decoded-and-response"
            })
            expect(sealedReply.status).toBe(201)
            return sealed.package_uuid
          })
        const ours = yield* packageOf(org)
        const theirs = yield* packageOf(other)
        expect((yield* dispute(org.key, account, { amount: "20", reason: "Defective", evidence_package_uuid: theirs })).body.code).toBe("EVIDENCE_NOT_FOUND")
        const withEvidence = { ...terms, evidence_package_uuid: ours }
        const [opened, openedReply] = yield* (yield* escrow(org.key)).dispute({
          params: accountParams(account),
          payload: { amount: "20", reason: "Defective", evidence_package_uuid: ours, signature: disputeSignature(org.key, withEvidence) },
          responseMode: "decoded-and-response"
        })
        expect(openedReply.status).toBe(200)
        expect(opened).toMatchObject({ evidence_package_uuid: ours, status: "open" })
        expect((yield* verifyReceipt(opened.receipt)).evidence_package_uuid).toBe(ours)
      })
    )

    it.effect("an owner or admin resolves the open dispute with a signed receipt, which unfreezes the account; members get 403", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const account = yield* newAccount()
        yield* deposit(org.key, account, { amount: "30.00" })
        expect((yield* resolve(org.key, account, { resolution: "dismissed" })).body.code).toBe("NO_OPEN_DISPUTE")
        const opened = yield* (yield* escrow(org.key)).dispute({ params: accountParams(account), payload: { amount: "30.00", reason: "Contested" } })

        const teammate = yield* member(org, "member")
        const refused = yield* resolve(teammate.key, account, { resolution: "dismissed" })
        expect(refused.status).toBe(403)
        expect(refused.body.code).toBe("FORBIDDEN")
        expect((yield* resolve(teammate.token, account, { resolution: "dismissed" })).status).toBe(403)
        // Raw: an unknown resolution is outside the contract.
        expect((yield* raw("POST", `${PATH}/${account}/dispute/resolve`, { token: org.key, body: { resolution: "maybe" } })).status).toBe(422)

        const admin = yield* member(org, "admin")
        const [resolved, resolvedReply] = yield* (yield* escrow(admin.key)).resolveDispute({
          params: accountParams(account),
          payload: { resolution: "settled", note: "Refund agreed off-ledger" },
          responseMode: "decoded-and-response"
        })
        expect(resolvedReply.status).toBe(200)
        expect(resolved).toMatchObject({
          dispute_id: opened.dispute_id,
          status: "resolved",
          account_status: "active",
          resolution: "settled",
          resolution_note: "Refund agreed off-ledger",
          resolved_by: admin.userUuid,
          receipt: opened.receipt
        })
        const payload = yield* verifyReceipt(resolved.resolution_receipt!)
        expect(payload).toMatchObject({
          receipt_type: "escrow_dispute_resolution",
          dispute_id: opened.dispute_id,
          dispute_payload_hash: opened.receipt.payload_hash,
          previous_payload_hash: opened.receipt.payload_hash,
          resolution: "settled",
          account_status: "active",
          sequence: 3
        })
        expect((yield* resolve(org.key, account, { resolution: "settled" })).status).toBe(409)

        // Active again: money moves, and a new dispute may be opened.
        expect((yield* deposit(org.key, account, { amount: "1.00" })).body.balance_after).toBe("31.00")
        const got = yield* getAccount(org.key, account)
        expect(got.status).toBe("active")
        expect(got.disputes[0]).toMatchObject({ status: "resolved", resolution_receipt: resolved.resolution_receipt })
        expect((yield* dispute(org.key, account, { amount: "1.00", reason: "Second thoughts" })).status).toBe(200)
      })
    )
  })

  it.describe("isolation and access", () => {
    it.effect("another organization gets 404 on every escrow route of this organization's account", () =>
      Effect.gen(function* () {
        const { org, other } = yield* Orgs
        const account = yield* newAccount()
        yield* deposit(org.key, account, { amount: "5.00" })
        const stranger = yield* escrow(other.key)
        const attempts = [
          answer(stranger.get({ params: accountParams(account), responseMode: "response-only" })),
          answer(stranger.transactions({ params: accountParams(account), query: {}, responseMode: "response-only" })),
          deposit(other.key, account, { amount: "1.00" }),
          release(other.key, account, { amount: "1.00" }),
          dispute(other.key, account, { amount: "1.00", reason: "hostile" }),
          resolve(other.token, account, { resolution: "dismissed" })
        ]
        for (const reply of yield* Effect.all(attempts, { concurrency: "unbounded" })) expect([reply.status, reply.body.code]).toEqual([404, "NOT_FOUND"])
        expect(yield* getAccount(org.key, account)).toMatchObject({ balance: "5.00", status: "active", transaction_count: 1 })
      })
    )

    it.effect("an unknown account is 404 NOT_FOUND on every route", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const missing = randomUUID()
        for (const reply of [
          yield* answer((yield* escrow(org.key)).get({ params: accountParams(missing), responseMode: "response-only" })),
          yield* deposit(org.key, missing, { amount: "1.00" }),
          yield* release(org.key, missing, { amount: "1.00" }),
          yield* dispute(org.key, missing, { amount: "1.00", reason: "x" }),
          yield* resolve(org.key, missing, { resolution: "dismissed" })
        ]) {
          expect([reply.status, reply.body.code]).toEqual([404, "NOT_FOUND"])
        }
      })
    )

    it.effect("deleting the organization removes its accounts, transactions and disputes", () =>
      Effect.gen(function* () {
        const server = yield* Gateway
        const doomed = yield* register("Doomed Escrow Org")
        const account = (yield* (yield* escrow(doomed.key)).create({ payload: {} })).account_uuid
        yield* deposit(doomed.key, account, { amount: "3.00" })
        yield* release(doomed.key, account, { amount: "1.00" })
        yield* dispute(doomed.key, account, { amount: "1.00", reason: "x" })
        const rows = Effect.promise(() =>
          server.run(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              const counts = []
              for (const table of ["escrow_accounts", "escrow_transactions", "escrow_disputes"]) {
                const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE org_uuid = ${doomed.orgUuid}`
                counts.push(row!.n)
              }
              return counts
            })
          )
        )
        expect(yield* rows).toEqual([1, 2, 1])
        expect((yield* (yield* client(doomed.token)).auth.deleteAccount({ responseMode: "response-only" })).status).toBe(200)
        expect(yield* rows).toEqual([0, 0, 0])
      })
    )

    it.effect("keys need escrow:read to read and escrow:write to change", () =>
      Effect.gen(function* () {
        const { org } = yield* Orgs
        const keys = (yield* client(org.key)).apiKeys
        const account = yield* newAccount()
        const [readOnly, readOnlyReply] = yield* keys.create({ payload: { name: "reader", scopes: ["escrow:read"] }, responseMode: "decoded-and-response" })
        expect(readOnlyReply.status).toBe(201)
        const reader = yield* escrow(readOnly.key)
        expect((yield* reader.get({ params: accountParams(account), responseMode: "response-only" })).status).toBe(200)
        expect((yield* deposit(readOnly.key, account, { amount: "1.00" })).status).toBe(403)
        expect((yield* createAccount(readOnly.key)).status).toBe(403)
        const unrelated = yield* keys.create({ payload: { name: "actions only", scopes: ["actions:read"] } })
        expect((yield* (yield* escrow(unrelated.key)).list({ query: {}, responseMode: "response-only" })).status).toBe(403)
      })
    )

    it.effect("the release fee defaults to 0 basis points", () =>
      Effect.sync(() => {
        expect(loadConfig({}).escrowFeeBasisPoints).toBe(0)
        expect(loadConfig({ ESCROW_FEE_BASIS_POINTS: "10000" }).escrowFeeBasisPoints).toBe(10_000)
        expect(() => loadConfig({ ESCROW_FEE_BASIS_POINTS: "10001" })).toThrow(/ESCROW_FEE_BASIS_POINTS/)
      })
    )
  })
})
