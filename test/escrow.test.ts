/**
 * Escrow end to end over HTTP (spec 001 "Escrow"): accounts with their currency and agent checks,
 * deposits and releases with exact decimal strings, fees and signed receipts verifiable with the
 * JWKS, 100 concurrent movements on one account through two servers, disputes that freeze it (signature, evidence)
 * and their resolution by an owner or admin, other organizations' 404s and key scopes.
 */
import { createHash, createHmac, createPublicKey, randomUUID, verify } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../src/platform/config.js"
import { addMember, call, registerOrg } from "./support/client.js"
import { useFixture } from "./support/fixture.js"
import { startServer, useServer } from "./support/server.js"

// 2.5 % on releases, so the fee arithmetic shows in every release below.
const server = useServer({ ESCROW_FEE_BASIS_POINTS: "250" })
const org = useFixture(() => registerOrg(server.url, "Escrow Org"))
const other = useFixture(() => registerOrg(server.url, "Other Escrow Org"))

const PATH = "/api/v1/escrow/accounts"
let slugCounter = 0
const uniqueSlug = (label: string) => `${label}-${process.pid}-${Date.now().toString(36)}-${++slugCounter}`

const createAccount = (token: string, body: Record<string, unknown> = {}) => call(server.url, "POST", PATH, { token, body })
const deposit = (token: string, account: string, body: Record<string, unknown>) => call(server.url, "POST", `${PATH}/${account}/deposit`, { token, body })
const release = (token: string, account: string, body: Record<string, unknown>) => call(server.url, "POST", `${PATH}/${account}/release`, { token, body })
const dispute = (token: string, account: string, body: Record<string, unknown>) => call(server.url, "POST", `${PATH}/${account}/dispute`, { token, body })
const resolve = (token: string, account: string, body: Record<string, unknown>) => call(server.url, "POST", `${PATH}/${account}/dispute/resolve`, { token, body })
const getAccount = (token: string, account: string) => call(server.url, "GET", `${PATH}/${account}`, { token })

const newAccount = async (body: Record<string, unknown> = {}) => {
  const reply = await createAccount(org.key, body)
  expect(reply.status).toBe(201)
  return reply.body.account_uuid as string
}

/** Checks a receipt offline: payload hash, and the Ed25519 signature by the JWKS key it names. */
const verifyReceipt = async (receipt: any) => {
  const jwks = await call(server.url, "GET", "/api/v1/.well-known/jwks.json")
  const jwk = jwks.body.keys.find((key: { kid: string }) => key.kid === receipt.public_key_id)
  expect(jwk).toBeDefined()
  const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: jwk.x }, format: "jwk" })
  const bytes = Buffer.from(receipt.signed_payload, "utf8")
  expect(receipt.payload_hash).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`)
  expect(verify(null, bytes, publicKey, Buffer.from(receipt.signature.slice("ed25519:".length), "base64url"))).toBe(true)
  return JSON.parse(receipt.signed_payload)
}

const disputeSignature = (credential: string, terms: { account_uuid: string; amount: string; reason: string; evidence_package_uuid: string | null }) =>
  // JSON.stringify of keys in sorted order is the JCS of these plain strings.
  `hmac-sha256:${createHmac("sha256", credential)
    .update(JSON.stringify({ account_uuid: terms.account_uuid, amount: terms.amount, evidence_package_uuid: terms.evidence_package_uuid, reason: terms.reason }))
    .digest("hex")}`

describe("accounts", () => {
  it("creates an account: EUR by default, balance 0.00, active; unknown fields ignored", async () => {
    const reply = await createAccount(org.key, {
      purpose: "Hold the supplier's deposit",
      counterparty_org_uuid: other.orgUuid,
      counterparty: { name: "Supplier Ltd", identifier: "GB123", type: "organization" },
      unexpected: true
    })
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
    const got = await getAccount(org.key, reply.body.account_uuid)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({ account_uuid: reply.body.account_uuid, balance: "0.00", transactions: [], disputes: [] })
  })

  it("answers balances with the currency's ISO 4217 digits; unknown currencies are 400 UNSUPPORTED_CURRENCY", async () => {
    expect((await createAccount(org.key, { currency: "JPY" })).body.balance).toBe("0")
    expect((await createAccount(org.key, { currency: "kwd" })).body).toMatchObject({ currency: "KWD", balance: "0.000" })
    for (const currency of ["ABC", "XXX", "EURO", "", "€"]) {
      const reply = await createAccount(org.key, { currency })
      expect(reply.status, currency).toBe(400)
      expect(reply.body.code, currency).toBe("UNSUPPORTED_CURRENCY")
    }
  })

  it("agent_id must be an active agent of the caller's organization", async () => {
    const slug = uniqueSlug("payer")
    expect((await call(server.url, "POST", "/api/v1/agents", { token: org.key, body: { agent_slug: slug, name: "Payer" } })).status).toBe(201)
    const linked = await createAccount(org.key, { agent_id: slug })
    expect(linked.status).toBe(201)
    expect(linked.body.agent_id).toBe(slug)

    const unknown = await createAccount(org.key, { agent_id: uniqueSlug("nobody") })
    expect(unknown.status).toBe(404)
    expect(unknown.body.code).toBe("AGENT_NOT_FOUND")
    // Another organization's agent is not found either.
    const foreign = await createAccount(other.key, { agent_id: slug })
    expect(foreign.status).toBe(404)
    expect(foreign.body.code).toBe("AGENT_NOT_FOUND")

    await call(server.url, "POST", `/api/v1/agents/${slug}/decommission`, { token: org.key, body: { reason: "retired" } })
    const retired = await createAccount(org.key, { agent_id: slug })
    expect(retired.status).toBe(422)
    expect(retired.body.code).toBe("AGENT_DECOMMISSIONED")
  })

  it("lists the organization's accounts, newest first, under accounts and data", async () => {
    const fresh = await registerOrg(server.url, "Escrow List Org")
    const ids: Array<string> = []
    for (const purpose of ["a", "b", "c"]) ids.push((await createAccount(fresh.key, { purpose })).body.account_uuid)
    const page = await call(server.url, "GET", `${PATH}?per_page=2`, { token: fresh.key })
    expect(page.status).toBe(200)
    expect(page.body.pagination).toEqual({ page: 1, per_page: 2, total: 3, has_more: true })
    expect(page.body.accounts).toEqual(page.body.data)
    expect(page.body.accounts.map((account: any) => account.account_uuid)).toEqual([ids[2], ids[1]])
    expect(Object.keys(page.body.accounts[0]).sort()).toEqual(["account_uuid", "agent_id", "balance", "created_at", "currency", "purpose", "status"])
    const second = await call(server.url, "GET", `${PATH}?page=2&per_page=2`, { token: fresh.key })
    expect(second.body.accounts.map((account: any) => account.account_uuid)).toEqual([ids[0]])
    for (const query of ["per_page=101", "per_page=0", "page=0"]) {
      expect((await call(server.url, "GET", `${PATH}?${query}`, { token: fresh.key })).status, query).toBe(422)
    }
    const foreign = await call(server.url, "GET", PATH, { token: other.key })
    expect(foreign.body.accounts.map((account: any) => account.account_uuid)).not.toContain(ids[0])
  })
})

describe("deposits and releases", () => {
  it("deposits (201) and releases (200) with exact decimal strings, fee and net_release, and signed, chained receipts", async () => {
    const account = await newAccount({ purpose: "ledger" })
    const first = await deposit(org.key, account, { amount: "100.00", description: "initial", reference: "INV-1", signature: "ignored" })
    expect(first.status).toBe(201)
    expect(first.body).toMatchObject({
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
    expect(first.body).toMatchObject({ fee: null, net_release: null })
    expect(first.body.transaction_id).toMatch(/^etx_/)
    expect(first.body.receipt).toMatchObject({ receipt_uuid: expect.stringMatching(/^rct_/), receipt_version: "1.0", timestamp: first.body.created_at })

    // A JSON number is read through its shortest decimal text: 100.5 → "100.50".
    const second = await deposit(org.key, account, { amount: 100.5, reference_action_uuid: "act_123" })
    expect(second.status).toBe(201)
    expect(second.body).toMatchObject({ amount: "100.50", balance_after: "200.50", reference: "act_123", reference_action_uuid: "act_123", sequence: 2 })

    const paid = await release(org.key, account, { amount: "40.10", description: "milestone 1" })
    expect(paid.status).toBe(200)
    // 2.5 % of 40.10 = 1.0025 → 1.00; the balance drops by the gross amount.
    expect(paid.body).toMatchObject({ type: "release", amount: "40.10", fee: "1.00", net_release: "39.10", balance_after: "160.40", sequence: 3 })
    const half = await release(org.key, account, { amount: "0.20" })
    // 2.5 % of 0.20 = 0.005 → 0.01 (half up).
    expect(half.body).toMatchObject({ fee: "0.01", net_release: "0.19", balance_after: "160.20" })

    const payloads = []
    for (const reply of [first, second, paid, half]) payloads.push(await verifyReceipt(reply.body.receipt))
    expect(payloads[0]).toMatchObject({
      receipt_type: "escrow_transaction",
      receipt_uuid: first.body.receipt.receipt_uuid,
      transaction_id: first.body.transaction_id,
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
    for (const [index, before] of [first, second, paid].entries()) expect(payloads[index + 1].previous_payload_hash).toBe(before.body.receipt.payload_hash)

    const got = await getAccount(org.key, account)
    expect(got.body).toMatchObject({ balance: "160.20", status: "active", transaction_count: 4 })
    // Newest first, with the very receipts the movements answered.
    expect(got.body.transactions.map((t: any) => t.transaction_id)).toEqual([half, paid, second, first].map((reply) => reply.body.transaction_id))
    expect(got.body.transactions[3].receipt).toEqual(first.body.receipt)
    const { request_id: _paidRequest, ...paidBody } = paid.body
    expect(got.body.transactions[1]).toEqual(paidBody)

    const paged = await call(server.url, "GET", `${PATH}/${account}/transactions?per_page=3`, { token: org.key })
    expect(paged.status).toBe(200)
    expect(paged.body.pagination).toEqual({ page: 1, per_page: 3, total: 4, has_more: true })
    expect(paged.body.transactions).toEqual(paged.body.data)
    expect(paged.body.transactions[0].transaction_id).toBe(half.body.transaction_id)
  })

  it("refuses bad amounts with 400 INVALID_AMOUNT, a missing one with 422, and overdrafts with 400 INSUFFICIENT_BALANCE", async () => {
    const account = await newAccount()
    for (const amount of ["0", "0.00", "-5.00", "1.001", "abc", "1e3", "", " 1", 0, -1, 0.001, 1e21, "9".repeat(30)]) {
      const reply = await deposit(org.key, account, { amount })
      expect([amount, reply.status, reply.body.code]).toEqual([amount, 400, "INVALID_AMOUNT"])
    }
    expect((await deposit(org.key, account, {})).status).toBe(422)
    expect((await deposit(org.key, account, { amount: true })).status).toBe(422)
    expect((await deposit(org.key, account, { amount: "10.00" })).status).toBe(201)
    const over = await release(org.key, account, { amount: "10.01" })
    expect(over.status).toBe(400)
    expect(over.body).toMatchObject({ code: "INSUFFICIENT_BALANCE", details: { balance: "10.00", amount: "10.01" } })
    expect((await release(org.key, account, { amount: "1.005" })).body.code).toBe("INVALID_AMOUNT")
    const all = await release(org.key, account, { amount: "10" })
    expect(all.body).toMatchObject({ amount: "10.00", fee: "0.25", net_release: "9.75", balance_after: "0.00" })
    expect((await getAccount(org.key, account)).body.balance).toBe("0.00")

    const yen = await newAccount({ currency: "JPY" })
    expect((await deposit(org.key, yen, { amount: "1.5" })).body.code).toBe("INVALID_AMOUNT")
    expect((await deposit(org.key, yen, { amount: 1500 })).body).toMatchObject({ amount: "1500", balance_after: "1500" })
  })

  it("100 concurrent deposits and releases on one account, through two servers on one database, leave the exact balance and never go negative", async () => {
    const account = await newAccount()
    expect((await deposit(org.key, account, { amount: "5.00" })).status).toBe(201)
    // A second server on the same database: the per-account lock is Postgres's, not a process's.
    const twin = await startServer({ DATABASE_URL: server.config.databaseUrl!, ESCROW_FEE_BASIS_POINTS: "250" })
    const moves = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? { kind: "deposit", amount: "1.25" } : { kind: "release", amount: "3.00" }))
    const replies = await Promise.all(
      moves.map((move, i) =>
        call(i % 4 < 2 ? server.url : twin.url, "POST", `${PATH}/${account}/${move.kind}`, { token: org.key, body: { amount: move.amount } })
      )
    ).finally(() => twin.stop())
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
    const got = await getAccount(org.key, account)
    const cents = (text: string) => BigInt(text.replace(".", ""))
    expect(cents(got.body.balance)).toBe(expected)
    expect(got.body.transaction_count).toBe(101 - refused)

    // Replaying the ledger in its order gives every balance_after, none negative, sequences without a gap.
    const page = await call(server.url, "GET", `${PATH}/${account}/transactions?per_page=100`, { token: org.key })
    const rest = await call(server.url, "GET", `${PATH}/${account}/transactions?per_page=100&page=2`, { token: org.key })
    const ledger = [...page.body.transactions, ...rest.body.transactions].reverse()
    let running = 0n
    for (const [index, entry] of ledger.entries()) {
      expect(entry.sequence).toBe(index + 1)
      running += entry.type === "deposit" ? cents(entry.amount) : -cents(entry.amount)
      expect(cents(entry.balance_after)).toBe(running)
      expect(running >= 0n).toBe(true)
    }
    expect(running).toBe(expected)
  }, 60_000)
})

describe("disputes", () => {
  it("a dispute freezes the account: then a deposit or release is 409 ACCOUNT_FROZEN and a second dispute 409 DISPUTE_ALREADY_OPEN", async () => {
    const account = await newAccount()
    await deposit(org.key, account, { amount: "50.00" })
    const opened = await dispute(org.key, account, { amount: "20.00", description: "Goods not delivered", reference_action_uuid: "act_9" })
    expect(opened.status).toBe(200)
    expect(opened.body).toMatchObject({
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
    expect(opened.body.dispute_id).toMatch(/^dsp_/)
    const signedPayload = await verifyReceipt(opened.body.receipt)
    expect(signedPayload).toMatchObject({ receipt_type: "escrow_dispute", dispute_id: opened.body.dispute_id, status: "open", account_status: "frozen", balance: "50.00", sequence: 2 })

    const blocked = await deposit(org.key, account, { amount: "1.00" })
    expect(blocked.status).toBe(409)
    expect(blocked.body.code).toBe("ACCOUNT_FROZEN")
    expect((await release(org.key, account, { amount: "1.00" })).body.code).toBe("ACCOUNT_FROZEN")
    const again = await dispute(org.key, account, { amount: "1.00", reason: "again" })
    expect(again.status).toBe(409)
    expect(again.body.code).toBe("DISPUTE_ALREADY_OPEN")

    const got = await getAccount(org.key, account)
    expect(got.body).toMatchObject({ status: "frozen", balance: "50.00" })
    const { request_id: _openedRequest, ...openedBody } = opened.body
    expect(got.body.disputes).toEqual([openedBody])
    expect((await call(server.url, "GET", PATH, { token: org.key })).body.accounts.find((a: any) => a.account_uuid === account).status).toBe("frozen")
  })

  it("needs a reason or description (422) and a valid amount (400); the SDK's reason is accepted", async () => {
    const account = await newAccount()
    const missing = await dispute(org.key, account, { amount: "1.00" })
    expect(missing.status).toBe(422)
    // The spec's field is named; a caller who used the SDK's `reason` is told about `reason`.
    expect(missing.body.details.issues.map((issue: { path: string }) => issue.path)).toEqual(["description"])
    const blankReason = await dispute(org.key, account, { amount: "1.00", reason: " " })
    expect(blankReason.status).toBe(422)
    expect(blankReason.body.details.issues.map((issue: { path: string }) => issue.path)).toEqual(["reason"])
    expect((await dispute(org.key, account, { reason: "no amount" })).status).toBe(422)
    expect((await dispute(org.key, account, { amount: "0", reason: "zero" })).body.code).toBe("INVALID_AMOUNT")
    const sdk = await dispute(org.key, account, { amount: 12.5, reason: "Late delivery" })
    expect(sdk.status).toBe(200)
    expect(sdk.body).toMatchObject({ amount: "12.50", reason: "Late delivery", description: null })
  })

  it("checks an optional signature (400 INVALID_SIGNATURE) and an optional evidence package (404 EVIDENCE_NOT_FOUND)", async () => {
    const account = await newAccount()
    const terms = { account_uuid: account, amount: "20.00", reason: "Defective", evidence_package_uuid: null }
    const forged = await dispute(org.key, account, { amount: "20", reason: "Defective", signature: disputeSignature("not-my-key", terms) })
    expect(forged.status).toBe(400)
    expect(forged.body.code).toBe("INVALID_SIGNATURE")
    const otherTerms = await dispute(org.key, account, { amount: "20", reason: "Defective", signature: disputeSignature(org.key, { ...terms, amount: "21.00" }) })
    expect(otherTerms.body.code).toBe("INVALID_SIGNATURE")

    const missing = randomUUID()
    const noEvidence = await dispute(org.key, account, { amount: "20", reason: "Defective", evidence_package_uuid: missing })
    expect(noEvidence.status).toBe(404)
    expect(noEvidence.body.code).toBe("EVIDENCE_NOT_FOUND")
    expect((await dispute(org.key, account, { amount: "20", reason: "Defective", evidence_package_uuid: "not-a-uuid" })).body.code).toBe("EVIDENCE_NOT_FOUND")

    // One evidence package of each organization, sealed through the evidence area.
    const packageOf = async (owner: { key: string }) => {
      const action = await call(server.url, "POST", "/api/v1/actions", { token: owner.key, body: { action_type: "refund", details: "disputed order" } })
      const sealed = await call(server.url, "POST", "/api/v1/evidence/packages", { token: owner.key, body: { action_uuids: [action.body.action_uuid], title: "dispute evidence" } })
      expect(sealed.status).toBe(201)
      return sealed.body.package_uuid as string
    }
    const ours = await packageOf(org)
    const theirs = await packageOf(other)
    expect((await dispute(org.key, account, { amount: "20", reason: "Defective", evidence_package_uuid: theirs })).body.code).toBe("EVIDENCE_NOT_FOUND")
    const withEvidence = { ...terms, evidence_package_uuid: ours }
    const opened = await dispute(org.key, account, { amount: "20", reason: "Defective", evidence_package_uuid: ours, signature: disputeSignature(org.key, withEvidence) })
    expect(opened.status).toBe(200)
    expect(opened.body).toMatchObject({ evidence_package_uuid: ours, status: "open" })
    expect((await verifyReceipt(opened.body.receipt)).evidence_package_uuid).toBe(ours)
  })

  it("an owner or admin resolves the open dispute with a signed receipt, which unfreezes the account; members get 403", async () => {
    const account = await newAccount()
    await deposit(org.key, account, { amount: "30.00" })
    expect((await resolve(org.key, account, { resolution: "dismissed" })).body.code).toBe("NO_OPEN_DISPUTE")
    const opened = await dispute(org.key, account, { amount: "30.00", reason: "Contested" })

    const member = await addMember(server.url, org, "member")
    const refused = await resolve(member.key, account, { resolution: "dismissed" })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("FORBIDDEN")
    expect((await resolve(member.token, account, { resolution: "dismissed" })).status).toBe(403)
    expect((await resolve(org.key, account, { resolution: "maybe" })).status).toBe(422)

    const admin = await addMember(server.url, org, "admin")
    const resolved = await resolve(admin.key, account, { resolution: "settled", note: "Refund agreed off-ledger" })
    expect(resolved.status).toBe(200)
    expect(resolved.body).toMatchObject({
      dispute_id: opened.body.dispute_id,
      status: "resolved",
      account_status: "active",
      resolution: "settled",
      resolution_note: "Refund agreed off-ledger",
      resolved_by: admin.userUuid,
      receipt: opened.body.receipt
    })
    const payload = await verifyReceipt(resolved.body.resolution_receipt)
    expect(payload).toMatchObject({
      receipt_type: "escrow_dispute_resolution",
      dispute_id: opened.body.dispute_id,
      dispute_payload_hash: opened.body.receipt.payload_hash,
      previous_payload_hash: opened.body.receipt.payload_hash,
      resolution: "settled",
      account_status: "active",
      sequence: 3
    })
    expect((await resolve(org.key, account, { resolution: "settled" })).status).toBe(409)

    // Active again: money moves, and a new dispute may be opened.
    expect((await deposit(org.key, account, { amount: "1.00" })).body.balance_after).toBe("31.00")
    const got = await getAccount(org.key, account)
    expect(got.body.status).toBe("active")
    expect(got.body.disputes[0]).toMatchObject({ status: "resolved", resolution_receipt: resolved.body.resolution_receipt })
    expect((await dispute(org.key, account, { amount: "1.00", reason: "Second thoughts" })).status).toBe(200)
  })
})

describe("isolation and access", () => {
  it("another organization gets 404 on every escrow route of this organization's account", async () => {
    const account = await newAccount()
    await deposit(org.key, account, { amount: "5.00" })
    const attempts = [
      getAccount(other.key, account),
      call(server.url, "GET", `${PATH}/${account}/transactions`, { token: other.key }),
      deposit(other.key, account, { amount: "1.00" }),
      release(other.key, account, { amount: "1.00" }),
      dispute(other.key, account, { amount: "1.00", reason: "hostile" }),
      resolve(other.token, account, { resolution: "dismissed" })
    ]
    for (const reply of await Promise.all(attempts)) expect([reply.status, reply.body.code]).toEqual([404, "NOT_FOUND"])
    expect((await getAccount(org.key, account)).body).toMatchObject({ balance: "5.00", status: "active", transaction_count: 1 })
  })

  it("an unknown account is 404 NOT_FOUND on every route", async () => {
    const missing = randomUUID()
    for (const reply of [
      await getAccount(org.key, missing),
      await deposit(org.key, missing, { amount: "1.00" }),
      await release(org.key, missing, { amount: "1.00" }),
      await dispute(org.key, missing, { amount: "1.00", reason: "x" }),
      await resolve(org.key, missing, { resolution: "dismissed" })
    ]) {
      expect([reply.status, reply.body.code]).toEqual([404, "NOT_FOUND"])
    }
  })

  it("deleting the organization removes its accounts, transactions and disputes", async () => {
    const doomed = await registerOrg(server.url, "Doomed Escrow Org")
    const account = (await createAccount(doomed.key)).body.account_uuid
    await deposit(doomed.key, account, { amount: "3.00" })
    await release(doomed.key, account, { amount: "1.00" })
    await dispute(doomed.key, account, { amount: "1.00", reason: "x" })
    const rows = () =>
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
    expect(await rows()).toEqual([1, 2, 1])
    expect((await call(server.url, "DELETE", "/api/v1/auth/account", { token: doomed.token })).status).toBe(200)
    expect(await rows()).toEqual([0, 0, 0])
  })

  it("keys need escrow:read to read and escrow:write to change", async () => {
    const account = await newAccount()
    const readOnly = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "reader", scopes: ["escrow:read"] } })
    expect(readOnly.status).toBe(201)
    expect((await getAccount(readOnly.body.key, account)).status).toBe(200)
    expect((await deposit(readOnly.body.key, account, { amount: "1.00" })).status).toBe(403)
    expect((await createAccount(readOnly.body.key)).status).toBe(403)
    const unrelated = await call(server.url, "POST", "/api/v1/api-keys", { token: org.key, body: { name: "actions only", scopes: ["actions:read"] } })
    expect((await call(server.url, "GET", PATH, { token: unrelated.body.key })).status).toBe(403)
  })

  it("the release fee defaults to 0 basis points", () => {
    expect(loadConfig({}).escrowFeeBasisPoints).toBe(0)
    expect(loadConfig({ ESCROW_FEE_BASIS_POINTS: "10000" }).escrowFeeBasisPoints).toBe(10_000)
    expect(() => loadConfig({ ESCROW_FEE_BASIS_POINTS: "10001" })).toThrow(/ESCROW_FEE_BASIS_POINTS/)
  })
})
