/**
 * Escrow: the accounts (a form opens one), and an account's page: balance, its balance over time
 * (a running sum of its transactions), deposits and releases, disputes and their resolution, and
 * every transaction page by page.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { Chart, type ChartSpec } from "../../chart/chart.tsx"
import { ConfirmForm } from "../../confirm.tsx"
import { useApp } from "../../context.ts"
import { Empty, ErrorLine, FormFooter, Link, LoadView, Pager, PER_PAGE, pageOf, useLoad, useSubmit } from "../../kit.tsx"
import { BASE, navigate } from "../../router.ts"
import {
  createAccount,
  type EscrowAccountView,
  type EscrowDispute,
  type EscrowTransaction,
  getAccount,
  listAccounts,
  listTransactions,
  moveFunds,
  openDispute,
  type Resolution,
  resolveDispute
} from "./api.ts"
import { Hash, isNotFound, LedgerPage, NotFound, When } from "./shared.tsx"

const accountHref = (uuid: string) => `${BASE}/escrow/${encodeURIComponent(uuid)}`

export const EscrowList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, retry] = useLoad(() => listAccounts(session.token, page, PER_PAGE), [session.token, page])
  return (
    <LedgerPage title="Escrow accounts">
      <p class="hint">Liability-commitment ledgers: no real funds are held. Every movement carries a signed receipt.</p>
      <NewAccountForm />
      <section aria-labelledby="escrow-accounts-title">
        <h2 id="escrow-accounts-title">Accounts</h2>
        <LoadView loaded={loaded} retry={retry} what="escrow accounts">
          {({ accounts, pagination }) =>
            accounts.length === 0 ? (
              <Empty>No escrow accounts yet.</Empty>
            ) : (
              <>
                <div class="table-scroll">
                  <table class="case-table">
                    <caption class="visually-hidden">Escrow accounts</caption>
                    <thead>
                      <tr>
                        <th scope="col">Account</th>
                        <th scope="col">Balance</th>
                        <th scope="col">Status</th>
                        <th scope="col">Agent</th>
                        <th scope="col">Opened</th>
                      </tr>
                    </thead>
                    <tbody>
                      {accounts.map((account) => (
                        <tr key={account.account_uuid}>
                          <td data-label="Account" class="wrap">
                            <Link href={accountHref(account.account_uuid)}>{account.purpose ?? account.account_uuid}</Link>
                          </td>
                          <td data-label="Balance">
                            {account.balance} {account.currency}
                          </td>
                          <td data-label="Status">
                            <span class={`status account-${account.status}`}>{account.status}</span>
                          </td>
                          <td data-label="Agent" class="wrap">
                            {account.agent_id ?? "—"}
                          </td>
                          <td data-label="Opened">
                            <When at={account.created_at} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager pagination={pagination} search={search} label="Escrow accounts" />
              </>
            )
          }
        </LoadView>
      </section>
    </LedgerPage>
  )
}

const NewAccountForm = () => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [purpose, setPurpose] = useState("")
  const [currency, setCurrency] = useState("EUR")
  const [agentId, setAgentId] = useState("")
  const [name, setName] = useState("")
  const [identifier, setIdentifier] = useState("")
  const [kind, setKind] = useState("")
  const send = async (event: Event) => {
    event.preventDefault()
    let created: string | undefined
    const ok = await submit(async () => {
      const account = await createAccount(session.token, {
        purpose: purpose.trim() === "" ? null : purpose.trim(),
        currency: currency.trim() === "" ? "EUR" : currency.trim().toUpperCase(),
        agent_id: agentId.trim() === "" ? null : agentId.trim(),
        counterparty:
          name.trim() === "" && identifier.trim() === ""
            ? null
            : { name: name.trim() || null, identifier: identifier.trim() || null, type: kind === "" ? null : (kind as "individual" | "organization") }
      })
      created = account.account_uuid
    })
    if (ok && created !== undefined) {
      announce("Escrow account opened.")
      navigate(accountHref(created))
    }
  }
  return (
    <section class="new-case" aria-labelledby="new-account-title">
      <h2 id="new-account-title">Open an account</h2>
      <form onSubmit={send}>
        <div class="stack">
          <label for="escrow-purpose">Purpose</label>
          <input id="escrow-purpose" maxLength={2000} value={purpose} onInput={(event) => setPurpose(event.currentTarget.value)} />
        </div>
        <div class="form-row">
          <div class="stack">
            <label for="escrow-currency">Currency (ISO 4217)</label>
            <input id="escrow-currency" class="short" maxLength={16} value={currency} onInput={(event) => setCurrency(event.currentTarget.value)} />
          </div>
          <div class="stack">
            <label for="escrow-agent">Agent (slug, optional)</label>
            <input id="escrow-agent" maxLength={200} value={agentId} onInput={(event) => setAgentId(event.currentTarget.value)} />
          </div>
        </div>
        <fieldset class="models-choice">
          <legend>Counterparty (optional)</legend>
          <div class="form-row">
            <div class="stack">
              <label for="escrow-cp-name">Name</label>
              <input id="escrow-cp-name" maxLength={200} value={name} onInput={(event) => setName(event.currentTarget.value)} />
            </div>
            <div class="stack">
              <label for="escrow-cp-id">Identifier</label>
              <input id="escrow-cp-id" maxLength={200} value={identifier} onInput={(event) => setIdentifier(event.currentTarget.value)} />
            </div>
            <div class="stack">
              <label for="escrow-cp-type">Type</label>
              <select id="escrow-cp-type" value={kind} onChange={(event) => setKind(event.currentTarget.value)}>
                <option value="">not given</option>
                <option value="individual">individual</option>
                <option value="organization">organization</option>
              </select>
            </div>
          </div>
        </fieldset>
        <FormFooter error={error} busy={busy} label="Open account" />
      </form>
    </section>
  )
}

export const EscrowAccountPage = ({ accountUuid, search }: { accountUuid: string; search: string }) => {
  const { session } = useApp()
  const [version, setVersion] = useState(0)
  const [loaded, reload] = useLoad(() => getAccount(session.token, accountUuid), [session.token, accountUuid])
  // After a change: the account again in place (forms keep focus), its chart and transactions anew.
  const changed = () => {
    void reload()
    setVersion((n) => n + 1)
  }
  if (isNotFound(loaded)) return <NotFound what="Escrow account" back={`${BASE}/escrow`} backLabel="All escrow accounts" />
  const title = loaded.state === "ready" ? `Escrow account: ${loaded.value.purpose ?? loaded.value.account_uuid}` : "Escrow account"
  return (
    <LedgerPage title={title}>
      <LoadView loaded={loaded} retry={reload} what="the account">
        {(account) => (
          <>
            <AccountFacts account={account} />
            <BalanceChart account={account} version={version} />
            {account.status === "active" ? (
              <MovementForm account={account} onDone={changed} />
            ) : (
              <p class="notice">Frozen by an open dispute: deposits and releases are refused until it is resolved.</p>
            )}
            <Disputes account={account} onDone={changed} />
            <Transactions account={account} search={search} version={version} />
          </>
        )}
      </LoadView>
    </LedgerPage>
  )
}

const AccountFacts = ({ account }: { account: EscrowAccountView }) => (
  <dl class="facts">
    <dt>Balance</dt>
    <dd>
      <strong data-balance>
        {account.balance} {account.currency}
      </strong>
    </dd>
    <dt>Status</dt>
    <dd>
      <span class={`status account-${account.status}`}>{account.status}</span>
    </dd>
    <dt>Agent</dt>
    <dd>{account.agent_id ?? "—"}</dd>
    <dt>Counterparty</dt>
    <dd>
      {account.counterparty === null
        ? "—"
        : [account.counterparty.name, account.counterparty.identifier, account.counterparty.type].filter((part) => part !== null && part !== undefined).join(" · ")}
    </dd>
    <dt>Transactions</dt>
    <dd>{account.transaction_count}</dd>
    <dt>Opened</dt>
    <dd>
      <When at={account.created_at} />
    </dd>
    <dt>Account id</dt>
    <dd>
      <code class="hash">{account.account_uuid}</code>
    </dd>
  </dl>
)

/* Money as integers of minor units, so a running sum never drifts. */

const digitsOf = (amount: string) => (amount.includes(".") ? amount.length - amount.indexOf(".") - 1 : 0)

const toMinor = (amount: string, digits: number): bigint => {
  const negative = amount.startsWith("-")
  const [whole = "0", fraction = ""] = amount.replace(/^-/, "").split(".")
  const minor = BigInt(whole + fraction.padEnd(digits, "0").slice(0, digits))
  return negative ? -minor : minor
}

const fromMinor = (minor: bigint, digits: number): number => Number(minor) / 10 ** digits

/** Pages of transactions the balance chart reads at most (newest first), 100 each. */
const CHART_PAGES = 20

export interface BalancePoint {
  readonly at: string
  readonly balance: bigint
  readonly sequence: number
}

/**
 * The balance after each transaction, oldest first: deposits add their amount, releases take it
 * (fee included). `start` is the balance before the oldest one given (0 when it is the first).
 * Also answers the sequences where the ledger's own `balance_after` says otherwise.
 */
export const runningBalance = (transactions: ReadonlyArray<EscrowTransaction>, digits: number, start: bigint) => {
  let balance = start
  const points: BalancePoint[] = []
  const mismatches: number[] = []
  for (const transaction of [...transactions].sort((a, b) => a.sequence - b.sequence)) {
    const amount = toMinor(transaction.amount, digits)
    balance += transaction.type === "deposit" ? amount : -amount
    if (balance !== toMinor(transaction.balance_after, digits)) mismatches.push(transaction.sequence)
    points.push({ at: transaction.created_at, balance, sequence: transaction.sequence })
  }
  return { points, mismatches }
}

const BalanceChart = ({ account, version }: { account: EscrowAccountView; version: number }) => {
  const { session } = useApp()
  const [loaded, retry] = useLoad(async () => {
    const all: EscrowTransaction[] = []
    for (let page = 1; page <= CHART_PAGES; page++) {
      const { transactions, pagination } = await listTransactions(session.token, account.account_uuid, page, 100)
      all.push(...transactions)
      if (!pagination.has_more) return { transactions: all, complete: true }
    }
    return { transactions: all, complete: false }
  }, [session.token, account.account_uuid, version])
  return (
    <section aria-labelledby="balance-title" class="ledger-section">
      <h2 id="balance-title">Balance over time</h2>
      <LoadView loaded={loaded} retry={retry} what="the transactions">
        {({ transactions, complete }) => <BalanceFigure account={account} transactions={transactions} complete={complete} />}
      </LoadView>
    </section>
  )
}

const BalanceFigure = ({ account, transactions, complete }: { account: EscrowAccountView; transactions: ReadonlyArray<EscrowTransaction>; complete: boolean }) => {
  const digits = digitsOf(account.balance)
  const { spec, mismatches } = useMemo(() => {
    const oldest = transactions.reduce<EscrowTransaction | undefined>((first, t) => (first === undefined || t.sequence < first.sequence ? t : first), undefined)
    // When older transactions were not read, start from the balance just before the oldest one read.
    const start =
      complete || oldest === undefined
        ? 0n
        : toMinor(oldest.balance_after, digits) - (oldest.type === "deposit" ? toMinor(oldest.amount, digits) : -toMinor(oldest.amount, digits))
    const { points, mismatches } = runningBalance(transactions, digits, start)
    const opening = complete ? [{ at: account.created_at, balance: 0n }] : []
    const series = [...opening, ...points]
    const chart: ChartSpec = {
      title: `Balance of the account (${account.currency})`,
      xKind: "time",
      xLabel: "Time",
      kind: "step",
      unit: account.currency,
      x: series.map((point) => Date.parse(point.at) / 1000),
      series: [{ label: "Balance", values: series.map((point) => fromMinor(point.balance, digits)) }]
    }
    return { spec: chart, mismatches }
  }, [account, transactions, complete, digits])
  return (
    <>
      <Chart id="escrow-balance" spec={spec} />
      {!complete && <p class="hint">The chart shows the newest {transactions.length} transactions.</p>}
      {mismatches.length > 0 && (
        <p class="error" role="alert">
          The running sum differs from the ledger's recorded balance after transaction {mismatches.join(", ")}.
        </p>
      )}
    </>
  )
}

const MovementForm = ({ account, onDone }: { account: EscrowAccountView; onDone: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [kind, setKind] = useState<"deposit" | "release">("deposit")
  const [amount, setAmount] = useState("")
  const [description, setDescription] = useState("")
  const amountRef = useRef<HTMLInputElement>(null)
  const send = async (event: Event) => {
    event.preventDefault()
    const ok = await submit(() =>
      moveFunds(session.token, account.account_uuid, kind, { amount: amount.trim(), ...(description.trim() === "" ? {} : { description: description.trim() }) })
    )
    if (ok) {
      announce(`${kind === "deposit" ? "Deposit" : "Release"} of ${amount.trim()} ${account.currency} recorded.`)
      setAmount("")
      setDescription("")
      amountRef.current?.focus()
      onDone()
    } else amountRef.current?.focus()
  }
  return (
    <section class="new-case" aria-labelledby="movement-title">
      <h2 id="movement-title">Deposit or release</h2>
      <form onSubmit={send}>
        <div class="form-row">
          <div class="stack">
            <label for="movement-kind">Movement</label>
            <select id="movement-kind" value={kind} onChange={(event) => setKind(event.currentTarget.value as "deposit" | "release")}>
              <option value="deposit">Deposit</option>
              <option value="release">Release</option>
            </select>
          </div>
          <div class="stack">
            <label for="movement-amount">Amount ({account.currency})</label>
            <input id="movement-amount" ref={amountRef} inputMode="decimal" required value={amount} onInput={(event) => setAmount(event.currentTarget.value)} />
          </div>
        </div>
        <div class="stack">
          <label for="movement-description">Description (optional)</label>
          <input id="movement-description" maxLength={2000} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
        </div>
        <FormFooter error={error} busy={busy} label={<>Record {kind}</>} />
      </form>
    </section>
  )
}

const RESOLUTIONS: ReadonlyArray<Resolution> = ["upheld", "dismissed", "settled", "withdrawn"]

const Disputes = ({ account, onDone }: { account: EscrowAccountView; onDone: () => void }) => {
  const open = account.disputes.find((dispute) => dispute.status === "open")
  const heading = useRef<HTMLHeadingElement>(null)
  const openId = open?.dispute_id
  const seen = useRef(openId)
  // A dispute opened or resolved replaces the form that did it: focus goes to the section's heading.
  useEffect(() => {
    if (seen.current !== openId) heading.current?.focus()
    seen.current = openId
  }, [openId])
  return (
    <section class="ledger-section" aria-labelledby="disputes-title">
      <h2 id="disputes-title" ref={heading} tabIndex={-1}>
        Disputes
      </h2>
      {account.disputes.length === 0 ? (
        <Empty>No disputes.</Empty>
      ) : (
        <ul class="cards">
          {account.disputes.map((dispute) => (
            <DisputeCard key={dispute.dispute_id} dispute={dispute} />
          ))}
        </ul>
      )}
      {open !== undefined ? <ResolveForm account={account} onDone={onDone} /> : <DisputeForm account={account} onDone={onDone} />}
    </section>
  )
}

const DisputeCard = ({ dispute }: { dispute: EscrowDispute }) => (
  <li class="card" aria-label={`Dispute of ${dispute.amount} ${dispute.currency}`}>
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <span class={`status dispute-${dispute.status}`}>{dispute.status}</span>
        {dispute.resolution !== null && <> ({dispute.resolution})</>}
      </dd>
      <dt>Amount</dt>
      <dd>
        {dispute.amount} {dispute.currency}
      </dd>
      <dt>Reason</dt>
      <dd class="wrap">{dispute.reason}</dd>
      <dt>Opened</dt>
      <dd>
        <When at={dispute.opened_at} />
      </dd>
      {dispute.evidence_package_uuid !== null && (
        <>
          <dt>Evidence</dt>
          <dd>
            <Link href={`${BASE}/evidence/${encodeURIComponent(dispute.evidence_package_uuid)}`}>{dispute.evidence_package_uuid}</Link>
          </dd>
        </>
      )}
      {dispute.resolved_at !== null && (
        <>
          <dt>Resolved</dt>
          <dd>
            <When at={dispute.resolved_at} />
          </dd>
          <dt>Note</dt>
          <dd class="wrap">{dispute.resolution_note ?? "—"}</dd>
        </>
      )}
      <dt>Receipt</dt>
      <dd>
        <Hash value={dispute.receipt.payload_hash} />
      </dd>
    </dl>
  </li>
)

const DisputeForm = ({ account, onDone }: { account: EscrowAccountView; onDone: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit, setError } = useSubmit()
  const [amount, setAmount] = useState("")
  const [reason, setReason] = useState("")
  const [evidence, setEvidence] = useState("")
  const check = () => {
    if (amount.trim() !== "" && reason.trim() !== "") return true
    setError("Give the amount disputed and a reason.")
    return false
  }
  const confirm = async () => {
    const ok = await submit(() =>
      openDispute(session.token, account.account_uuid, {
        amount: amount.trim(),
        description: reason.trim(),
        ...(evidence.trim() === "" ? {} : { evidence_package_uuid: evidence.trim() })
      })
    )
    if (ok) {
      announce("Dispute opened; the account is frozen.")
      onDone()
    }
  }
  return (
    <ConfirmForm
      id="dispute-form"
      formClass="new-case"
      labelledBy="dispute-form-title"
      label="Open dispute"
      question="Opening a dispute freezes the account until an owner or admin resolves it. Open it?"
      busy={busy}
      check={check}
      onConfirm={() => void confirm()}
    >
      <h3 id="dispute-form-title">Open a dispute</h3>
      <div class="form-row">
        <div class="stack">
          <label for="dispute-amount">Amount disputed ({account.currency})</label>
          <input id="dispute-amount" inputMode="decimal" required value={amount} onInput={(event) => setAmount(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <label for="dispute-evidence">Evidence package id (optional)</label>
          <input id="dispute-evidence" maxLength={200} value={evidence} onInput={(event) => setEvidence(event.currentTarget.value)} />
        </div>
      </div>
      <div class="stack">
        <label for="dispute-reason">Reason</label>
        <textarea id="dispute-reason" required maxLength={5000} value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
      </div>
      <ErrorLine message={error} />
    </ConfirmForm>
  )
}

const ResolveForm = ({ account, onDone }: { account: EscrowAccountView; onDone: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [resolution, setResolution] = useState<Resolution>("settled")
  const [note, setNote] = useState("")
  const send = async (event: Event) => {
    event.preventDefault()
    const ok = await submit(() => resolveDispute(session.token, account.account_uuid, { resolution, ...(note.trim() === "" ? {} : { note: note.trim() }) }))
    if (ok) {
      announce(`Dispute resolved (${resolution}); the account is active again.`)
      onDone()
    }
  }
  return (
    <form class="new-case" onSubmit={send} aria-labelledby="resolve-title">
      <h3 id="resolve-title">Resolve the open dispute</h3>
      <p class="hint">Owners and admins only. Resolving it unfreezes the account.</p>
      <div class="stack">
        <label for="resolve-resolution">Resolution</label>
        <select id="resolve-resolution" value={resolution} onChange={(event) => setResolution(event.currentTarget.value as Resolution)}>
          {RESOLUTIONS.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
      </div>
      <div class="stack">
        <label for="resolve-note">Note (optional)</label>
        <textarea id="resolve-note" maxLength={5000} value={note} onInput={(event) => setNote(event.currentTarget.value)} />
      </div>
      <FormFooter error={error} busy={busy} label="Resolve dispute" />
    </form>
  )
}

const Transactions = ({ account, search, version }: { account: EscrowAccountView; search: string; version: number }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, retry] = useLoad(() => listTransactions(session.token, account.account_uuid, page, PER_PAGE), [session.token, account.account_uuid, page, version])
  return (
    <section class="ledger-section" aria-labelledby="transactions-title">
      <h2 id="transactions-title">Transactions</h2>
      <LoadView loaded={loaded} retry={retry} what="transactions">
        {({ transactions, pagination }) =>
          transactions.length === 0 ? (
            <Empty>No transactions yet.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Transactions, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">#</th>
                      <th scope="col">Type</th>
                      <th scope="col">Amount</th>
                      <th scope="col">Fee</th>
                      <th scope="col">Balance after</th>
                      <th scope="col">Description</th>
                      <th scope="col">When</th>
                      <th scope="col">Receipt</th>
                    </tr>
                  </thead>
                  <tbody>
                    {transactions.map((transaction) => (
                      <tr key={transaction.transaction_id}>
                        <td data-label="#">{transaction.sequence}</td>
                        <td data-label="Type">{transaction.type}</td>
                        <td data-label="Amount">
                          {transaction.type === "release" ? "−" : "+"}
                          {transaction.amount}
                        </td>
                        <td data-label="Fee">{transaction.fee ?? "—"}</td>
                        <td data-label="Balance after">{transaction.balance_after}</td>
                        <td data-label="Description" class="wrap">
                          {transaction.description ?? "—"}
                        </td>
                        <td data-label="When">
                          <When at={transaction.created_at} />
                        </td>
                        <td data-label="Receipt">
                          <code class="hash" title={transaction.receipt.payload_hash}>
                            {transaction.receipt.receipt_uuid}
                          </code>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={pagination} search={search} label="Transactions" />
            </>
          )
        }
      </LoadView>
    </section>
  )
}
