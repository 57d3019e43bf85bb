/**
 * Settlements: the organization's one Merkle log, sealed settlement by settlement. The list shows
 * the log's growth and verifies a receipt's inclusion or the consistency of two settlements; a
 * settlement's page shows its signed root, its checkpoint and its receipts, each verifiable. Every
 * proof is checked here (merkle.ts), against roots read separately from the proof.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { ApiError, getReceipt } from "../../api.ts"
import { Chart, type ChartSpec } from "../../chart/chart.tsx"
import { useApp } from "../../context.ts"
import { Empty, ErrorLine, Link, LoadView, Pager, PER_PAGE, pageOf, problemText, queryOf, setQuery, useLoad, useSubmit } from "../../kit.tsx"
import { BASE } from "../../router.ts"
import { consistencyProof, getCheckpoint, getSettlement, inclusionProof, listSettlements, type SettlementSummary, sealSettlement, settlementReceipts } from "./api.ts"
import { checkConsistency, checkInclusion, parseHash, type Report, toHex, treeSizes } from "./merkle.ts"
import { Hash, isNotFound, LedgerPage, NotFound, short, Verdict, When } from "./shared.tsx"

const settlementHref = (uuid: string) => `${BASE}/settlements/${encodeURIComponent(uuid)}`

/** Pages of settlements the growth chart and the consistency choice read at most (100 each, newest first). */
const ALL_PAGES = 20

const useAllSettlements = (version: number) => {
  const { session } = useApp()
  return useLoad(async () => {
    const all: SettlementSummary[] = []
    let complete = false
    for (let page = 1; page <= ALL_PAGES; page++) {
      const { data, pagination } = await listSettlements(session.token, page, 100)
      all.push(...data)
      if (!pagination.has_more) {
        complete = true
        break
      }
    }
    // With the oldest ones not read, the log size before them comes from the newest checkpoint.
    let base = 0
    if (!complete && all.length > 0) {
      const newest = all.reduce((a, b) => (Date.parse(a.sealed_at) >= Date.parse(b.sealed_at) ? a : b))
      const checkpoint = await getCheckpoint(session.token, newest.id)
      base = checkpoint.tree_size - all.reduce((sum, s) => sum + s.receipt_count, 0)
    }
    return { settlements: treeSizes(all, base), complete }
  }, [session.token, version])
}

export const SettlementsList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [version, setVersion] = useState(0)
  const [loaded, retry] = useLoad(() => listSettlements(session.token, page, PER_PAGE), [session.token, page, version])
  const [all, retryAll] = useAllSettlements(version)
  return (
    <LedgerPage title="Settlements">
      <p class="hint">Each settlement appends the organization's unsettled receipts to its one RFC 9162 Merkle log and signs the new root.</p>
      <SealButton onSealed={() => setVersion((n) => n + 1)} />
      <section class="ledger-section" aria-labelledby="growth-title">
        <h2 id="growth-title">The log's growth</h2>
        <LoadView loaded={all} retry={retryAll} what="the log's growth">
          {({ settlements, complete }) => <GrowthChart settlements={settlements} complete={complete} />}
        </LoadView>
      </section>
      <section class="ledger-section" aria-labelledby="settlements-title">
        <h2 id="settlements-title">All settlements</h2>
        <LoadView loaded={loaded} retry={retry} what="settlements">
          {({ data, pagination }) =>
            data.length === 0 ? (
              <Empty>No settlements yet.</Empty>
            ) : (
              <>
                <div class="table-scroll">
                  <table class="case-table">
                    <caption class="visually-hidden">Settlements, newest first</caption>
                    <thead>
                      <tr>
                        <th scope="col">Settlement</th>
                        <th scope="col">Sealed</th>
                        <th scope="col">Receipts</th>
                        <th scope="col">Period</th>
                        <th scope="col">Root</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.map((settlement) => (
                        <tr key={settlement.id}>
                          <td data-label="Settlement">
                            <Link href={settlementHref(settlement.id)} aria-label={`Settlement ${settlement.id}`}>
                              {short(settlement.id)}
                            </Link>
                          </td>
                          <td data-label="Sealed">
                            <When at={settlement.sealed_at} />
                          </td>
                          <td data-label="Receipts">{settlement.receipt_count}</td>
                          <td data-label="Period">
                            <When at={settlement.period_start} /> – <When at={settlement.period_end} />
                          </td>
                          <td data-label="Root">
                            <code class="hash">{settlement.merkle_root}</code>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager pagination={pagination} search={search} label="Settlements" />
              </>
            )
          }
        </LoadView>
      </section>
      <section class="ledger-section" aria-labelledby="inclusion-title">
        <h2 id="inclusion-title">Verify a receipt's inclusion</h2>
        <InclusionByIdForm />
      </section>
      <section class="ledger-section" aria-labelledby="consistency-title">
        <h2 id="consistency-title">Verify consistency between two settlements</h2>
        <LoadView loaded={all} retry={retryAll} what="settlements">
          {({ settlements }) => <ConsistencyForm settlements={settlements} search={search} />}
        </LoadView>
      </section>
    </LedgerPage>
  )
}

const SealButton = ({ onSealed }: { onSealed: () => void }) => {
  const { session, announce } = useApp()
  const { busy, error, submit } = useSubmit()
  const [result, setResult] = useState<string | undefined>()
  const [sealedId, setSealedId] = useState<string | undefined>()
  const seal = async () => {
    setResult(undefined)
    let message = ""
    let sealed: string | undefined
    const ok = await submit(async () => {
      const settlement = await sealSettlement(session.token)
      sealed = settlement?.id
      message = settlement === null ? "Nothing to settle: every receipt is already in a settlement." : `Sealed ${settlement.receipt_count} receipts.`
    })
    if (ok) {
      setResult(message)
      setSealedId(sealed)
      announce(message)
      onSealed()
    }
  }
  return (
    <div class="seal">
      <button type="button" class="primary" disabled={busy} onClick={() => void seal()}>
        Seal unsettled receipts now
      </button>
      <span class="hint"> Owners and admins; at most 5 a minute.</span>
      {result !== undefined && (
        <p role="status">
          {result} {sealedId !== undefined && <Link href={settlementHref(sealedId)}>Open the new settlement</Link>}
        </p>
      )}
      <ErrorLine message={error} />
    </div>
  )
}

const GrowthChart = ({ settlements, complete }: { settlements: ReadonlyArray<SettlementSummary & { tree_size: number }>; complete: boolean }) => {
  const spec = useMemo<ChartSpec>(
    () => ({
      title: "Log size after each settlement (receipts)",
      xKind: "time",
      xLabel: "Sealed",
      kind: "step",
      unit: "receipts",
      x: settlements.map((settlement) => Date.parse(settlement.sealed_at) / 1000),
      series: [{ label: "Tree size", values: settlements.map((settlement) => settlement.tree_size) }]
    }),
    [settlements]
  )
  return (
    <>
      <Chart id="settlement-growth" spec={spec} />
      {!complete && <p class="hint">The chart shows the newest {settlements.length} settlements.</p>}
    </>
  )
}

type Run = { readonly state: "idle" } | { readonly state: "running" } | { readonly state: "done"; readonly report: Report; readonly note?: string } | { readonly state: "failed"; readonly message: string }

const RunView = ({ run, label }: { run: Run; label: string }) => {
  if (run.state === "idle") return null
  if (run.state === "running")
    return (
      <p role="status" class="loading">
        Fetching the proof and verifying it…
      </p>
    )
  if (run.state === "failed") return <ErrorLine message={run.message} />
  return (
    <>
      <Verdict report={run.report} label={label} />
      {run.note !== undefined && <p class="hint">{run.note}</p>}
    </>
  )
}

/** Fetches a receipt's inclusion proof and the settlement's signed root, and verifies here. */
const useInclusion = () => {
  const { session } = useApp()
  const [run, setRun] = useState<Run>({ state: "idle" })
  const start = async (receiptUuid: string, payloadHash?: string) => {
    setRun({ state: "running" })
    try {
      const proof = await inclusionProof(session.token, receiptUuid)
      const [settlement, hash] = await Promise.all([
        getSettlement(session.token, proof.settlement_uuid),
        payloadHash === undefined ? getReceipt(session.token, receiptUuid).then((receipt) => receipt.payload_hash) : Promise.resolve(payloadHash)
      ])
      const report = await checkInclusion(proof, { receipt_uuid: receiptUuid, payload_hash: hash }, settlement.merkle_root)
      setRun({ state: "done", report, note: `Receipt ${receiptUuid}: leaf ${proof.index} of ${proof.leaf_count} in settlement ${proof.settlement_uuid}.` })
    } catch (cause) {
      const message =
        cause instanceof ApiError && cause.status === 404
          ? "No settlement holds this receipt: it is not sealed yet, or it is not this organization's."
          : problemText(cause)
      setRun({ state: "failed", message })
    }
  }
  return { run, start }
}

const InclusionByIdForm = () => {
  const [receipt, setReceipt] = useState("")
  const { run, start } = useInclusion()
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        if (receipt.trim() !== "") void start(receipt.trim())
      }}
    >
      <div class="form-row">
        <div class="stack grow">
          <label for="inclusion-receipt">Receipt id</label>
          <input id="inclusion-receipt" required maxLength={64} value={receipt} onInput={(event) => setReceipt(event.currentTarget.value)} />
        </div>
        <div class="stack">
          <button type="submit" disabled={run.state === "running"}>
            Verify inclusion
          </button>
        </div>
      </div>
      <RunView run={run} label="Inclusion proof" />
    </form>
  )
}

const ConsistencyForm = ({ settlements, search }: { settlements: ReadonlyArray<SettlementSummary & { tree_size: number }>; search: string }) => {
  const { session } = useApp()
  const query = queryOf(search)
  const newestFirst = [...settlements].reverse()
  const from = query.from ?? settlements[0]?.id ?? ""
  const to = query.to ?? settlements[settlements.length - 1]?.id ?? ""
  const [run, setRun] = useState<Run>({ state: "idle" })
  if (settlements.length === 0) return <Empty>No settlements yet.</Empty>
  const verify = async (event: Event) => {
    event.preventDefault()
    setRun({ state: "running" })
    try {
      // The sizes and roots come from each settlement's own checkpoint, not from the proof.
      const [a, b] = await Promise.all([getCheckpoint(session.token, from), getCheckpoint(session.token, to)])
      const [older, newer] = a.tree_size <= b.tree_size ? [a, b] : [b, a]
      const proof = await consistencyProof(session.token, older.settlement_uuid, newer.settlement_uuid)
      const report = await checkConsistency(proof, older, newer)
      setRun({ state: "done", report, note: `From settlement ${older.settlement_uuid} (${older.tree_size} receipts) to ${newer.settlement_uuid} (${newer.tree_size}).` })
    } catch (cause) {
      setRun({ state: "failed", message: problemText(cause) })
    }
  }
  const option = (settlement: SettlementSummary & { tree_size: number }) => (
    <option key={settlement.id} value={settlement.id}>
      {new Date(settlement.sealed_at).toLocaleString()} · {settlement.tree_size} receipts · {short(settlement.id)}
    </option>
  )
  return (
    <form onSubmit={verify}>
      <div class="form-row">
        <div class="stack">
          <label for="consistency-from">Older settlement</label>
          <select id="consistency-from" value={from} onChange={(event) => setQuery(search, { from: event.currentTarget.value }, true)}>
            {newestFirst.map(option)}
          </select>
        </div>
        <div class="stack">
          <label for="consistency-to">Newer settlement</label>
          <select id="consistency-to" value={to} onChange={(event) => setQuery(search, { to: event.currentTarget.value }, true)}>
            {newestFirst.map(option)}
          </select>
        </div>
        <div class="stack">
          <button type="submit" disabled={run.state === "running"}>
            Verify consistency
          </button>
        </div>
      </div>
      <RunView run={run} label="Consistency proof" />
    </form>
  )
}

/** The checkpoint's body: origin, tree size and the root in base64 (C2SP tlog-checkpoint). */
const checkpointRoot = (checkpoint: string) => {
  const [, size, root] = checkpoint.split("\n")
  try {
    const bytes = Uint8Array.from(atob(root ?? ""), (c) => c.charCodeAt(0))
    return { size: Number(size), root: bytes.length === 32 ? `sha256:${toHex(bytes)}` : undefined }
  } catch {
    return { size: Number(size), root: undefined }
  }
}

export const SettlementPage = ({ settlementUuid, search }: { settlementUuid: string; search: string }) => {
  const { session } = useApp()
  const [loaded, retry] = useLoad(() => getSettlement(session.token, settlementUuid), [session.token, settlementUuid])
  const [checkpoint, retryCheckpoint] = useLoad(() => getCheckpoint(session.token, settlementUuid), [session.token, settlementUuid])
  if (isNotFound(loaded)) return <NotFound what="Settlement" back={`${BASE}/settlements`} backLabel="All settlements" />
  return (
    <LedgerPage title={`Settlement ${short(settlementUuid)}`}>
      <LoadView loaded={loaded} retry={retry} what="the settlement">
        {(settlement) => (
          <>
            <dl class="facts">
              <dt>Sealed</dt>
              <dd>
                <When at={settlement.sealed_at} />
              </dd>
              <dt>Period</dt>
              <dd>
                <When at={settlement.period_start} /> – <When at={settlement.period_end} />
              </dd>
              <dt>Receipts</dt>
              <dd>{settlement.receipt_count}</dd>
              <dt>Merkle root</dt>
              <dd>
                <Hash value={settlement.merkle_root} />
              </dd>
              <dt>Settlement hash</dt>
              <dd>
                <Hash value={settlement.settlement_hash} />
              </dd>
              <dt>Signature</dt>
              <dd>
                <Hash value={settlement.signature} />
              </dd>
              <dt>Signing key</dt>
              <dd>
                <code class="hash">{settlement.signing_key_id}</code>
              </dd>
              <dt>Timestamp token</dt>
              <dd>{settlement.timestamp_token === null ? "none" : "present (RFC 3161)"}</dd>
              <dt>Settlement id</dt>
              <dd>
                <code class="hash">{settlement.id}</code>
              </dd>
            </dl>
            <section class="ledger-section" aria-labelledby="checkpoint-title">
              <h2 id="checkpoint-title">Checkpoint</h2>
              <LoadView loaded={checkpoint} retry={retryCheckpoint} what="the checkpoint">
                {(value) => {
                  const body = checkpointRoot(value.checkpoint)
                  const matches = body.root === settlement.merkle_root && body.size === value.tree_size
                  return (
                    <>
                      <dl class="facts">
                        <dt>Log</dt>
                        <dd class="wrap">{value.origin}</dd>
                        <dt>Tree size</dt>
                        <dd>{value.tree_size} receipts</dd>
                        <dt>Verifier key</dt>
                        <dd>
                          <code class="hash">{value.verifier_key}</code>
                        </dd>
                      </dl>
                      <p class="hint">The signed checkpoint note (C2SP):</p>
<pre class="payload">
                        {value.checkpoint}
                      </pre>
                      <p class={matches ? "verdict-valid" : "verdict-invalid"}>
                        {matches ? "The checkpoint names this settlement's root and size." : "The checkpoint's root or size differs from the settlement's."}
                      </p>
                      <p>
                        <Link href={`${BASE}/settlements?to=${encodeURIComponent(settlement.id)}`}>Verify consistency with another settlement</Link>
                      </p>
                    </>
                  )
                }}
              </LoadView>
            </section>
            <SettlementReceipts settlementUuid={settlement.id} receiptCount={settlement.receipt_count} search={search} />
          </>
        )}
      </LoadView>
    </LedgerPage>
  )
}

const SettlementReceipts = ({ settlementUuid, receiptCount, search }: { settlementUuid: string; receiptCount: number; search: string }) => {
  const { session } = useApp()
  const page = pageOf(search)
  const [loaded, retry] = useLoad(() => settlementReceipts(session.token, settlementUuid, page, PER_PAGE), [session.token, settlementUuid, page])
  const { run, start } = useInclusion()
  const [chosen, setChosen] = useState<string | undefined>()
  const result = useRef<HTMLDivElement>(null)
  // The verdict sits above the table: focus goes there once it is in, so it is read and seen.
  useEffect(() => {
    if (run.state === "done" || run.state === "failed") result.current?.focus()
  }, [run])
  const pagination = { page, per_page: PER_PAGE, total: receiptCount, has_more: page * PER_PAGE < receiptCount }
  return (
    <section class="ledger-section" aria-labelledby="receipts-title">
      <h2 id="receipts-title">Receipts in this settlement</h2>
      <div class="inclusion-result" ref={result} tabIndex={-1}>
        {chosen !== undefined && <h3>Inclusion of receipt {short(chosen)}</h3>}
        <RunView run={run} label="Inclusion proof" />
      </div>
      <LoadView loaded={loaded} retry={retry} what="receipts">
        {(receipts) =>
          receipts.length === 0 ? (
            <Empty>No receipts on this page.</Empty>
          ) : (
            <>
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">Receipts in leaf order</caption>
                  <thead>
                    <tr>
                      <th scope="col">Leaf</th>
                      <th scope="col">Receipt</th>
                      <th scope="col">Action</th>
                      <th scope="col">Agent</th>
                      <th scope="col">Payload hash</th>
                      <th scope="col">Inclusion</th>
                    </tr>
                  </thead>
                  <tbody>
                    {receipts.map((receipt, index) => (
                      <tr key={receipt.receipt_uuid}>
                        <td data-label="Leaf">{(page - 1) * PER_PAGE + index + 1}</td>
                        <td data-label="Receipt">
                          <code class="hash">{receipt.receipt_uuid}</code>
                        </td>
                        <td data-label="Action" class="wrap">
                          <Link href={`${BASE}/actions/${encodeURIComponent(receipt.action_uuid)}`}>{receipt.action_type ?? receipt.action_uuid}</Link>
                        </td>
                        <td data-label="Agent" class="wrap">
                          {receipt.agent_id ?? "—"}
                        </td>
                        <td data-label="Payload hash">
                          <code class="hash">{receipt.payload_hash}</code>
                        </td>
                        <td data-label="Inclusion">
                          <button
                            type="button"
                            aria-label={`Verify inclusion of receipt ${receipt.receipt_uuid}`}
                            disabled={run.state === "running"}
                            onClick={() => {
                              setChosen(receipt.receipt_uuid)
                              void start(receipt.receipt_uuid, parseHash(receipt.payload_hash) === undefined ? undefined : receipt.payload_hash)
                            }}
                          >
                            Verify
                          </button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager pagination={pagination} search={search} label="Receipts" />
            </>
          )
        }
      </LoadView>
    </section>
  )
}
