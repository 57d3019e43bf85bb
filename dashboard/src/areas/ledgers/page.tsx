/**
 * The ledgers area: escrow accounts, settlements (Merkle proofs verified in the page), evidence
 * packages and estate records. The first path segment picks the section, the rest its page.
 */
import "./ledgers.css"
import type { AreaProps } from "../../areas.tsx"
import { BASE } from "../../router.ts"
import { EscrowAccountPage, EscrowList } from "./escrow.tsx"
import { AgentEstatePage, EstateList } from "./estate.tsx"
import { ChainLookupPage, ChainPage, EvidenceList, NewPackagePage, PackagePage, TimeTravelPage } from "./evidence.tsx"
import { SettlementPage, SettlementsList } from "./settlements.tsx"
import { NotFound } from "./shared.tsx"

const Missing = () => <NotFound what="Page" back={`${BASE}/escrow`} backLabel="Escrow accounts" />

export default function Page({ path, search }: AreaProps) {
  const [section, id, extra, ...rest] = path
  if (rest.length > 0) return <Missing />
  switch (section) {
    case "escrow":
      if (extra !== undefined) return <Missing />
      return id === undefined ? <EscrowList search={search} /> : <EscrowAccountPage key={id} accountUuid={id} search={search} />
    case "settlements":
      if (extra !== undefined) return <Missing />
      return id === undefined ? <SettlementsList search={search} /> : <SettlementPage key={id} settlementUuid={id} search={search} />
    case "evidence":
      if (id === "chain") return extra === undefined ? <ChainLookupPage /> : <ChainPage key={extra} actionUuid={extra} />
      if (extra !== undefined) return <Missing />
      if (id === undefined) return <EvidenceList search={search} />
      if (id === "new") return <NewPackagePage search={search} />
      if (id === "time-travel") return <TimeTravelPage search={search} />
      return <PackagePage key={id} packageUuid={id} />
    case "estate":
      if (extra !== undefined) return <Missing />
      return id === undefined ? <EstateList search={search} /> : <AgentEstatePage key={id} slug={id} search={search} />
    default:
      return <Missing />
  }
}
