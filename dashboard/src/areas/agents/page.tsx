/**
 * The agents area: `/dashboard/agents` (the organization's agents, filtered by status, paged) and
 * `/dashboard/agents/<slug>[/identity|/credentials|/mutual-signing]` (one agent, see detail.tsx).
 */
import "./agents.css"
import type { AreaProps } from "../../areas.tsx"
import { PageHeading } from "../../components.tsx"
import { useApp } from "../../context.ts"
import { localTime } from "../../format.ts"
import { Empty, FilterSelect, Link, LoadView, Pager, PER_PAGE, pageOf, queryOf, setQuery, useLoad } from "../../kit.tsx"
import { AGENT_STATUSES, type AgentPage, listAgents } from "./api.ts"
import { AgentDetail, agentHref, SECTIONS, type Section } from "./detail.tsx"

export default function Page({ path, search }: AreaProps) {
  const [, slug, section, ...rest] = path
  if (slug === undefined || slug === "") return <AgentsList search={search} />
  if (rest.length > 0 || (section !== undefined && !(SECTIONS as ReadonlyArray<string>).includes(section))) return <NoSuchPage />
  return <AgentDetail key={slug} slug={slug} section={(section ?? "overview") as Section} search={search} />
}

const NoSuchPage = () => (
  <main class="agents">
    <PageHeading>Page not found</PageHeading>
    <p>
      <Link href="agents">All agents</Link>
    </p>
  </main>
)

const AgentsList = ({ search }: { search: string }) => {
  const { session } = useApp()
  const query = queryOf(search)
  const status = (AGENT_STATUSES as ReadonlyArray<string>).includes(query.status ?? "") ? query.status! : ""
  const page = pageOf(search)
  const [loaded, reload] = useLoad<AgentPage>(() => listAgents(session.token, page, PER_PAGE, status), [session.token, status, page])
  return (
    <main class="agents">
      <PageHeading>Agents</PageHeading>
      <p class="hint">Agents are registered through the API or an SDK; each has a DID, a capability credential and a reputation.</p>
      <form class="filters" aria-label="Filter agents" onSubmit={(event) => event.preventDefault()}>
        <FilterSelect id="agents-filter-status" label="Status" value={status} choices={AGENT_STATUSES} onChange={(value) => setQuery(search, { status: value })} />
      </form>
      <LoadView loaded={loaded} retry={reload} what="agents">
        {(answer) => (
          <>
            {answer.agents.length === 0 ? (
              <Empty>
                {status === "" ? "No agents registered yet. Register one with POST /api/v1/agents or an SDK." : `No ${status} agents.`}
                {page > 1 && answer.pagination.total > 0 && " This page is past the end of the list."}
              </Empty>
            ) : (
              <div class="table-scroll">
                <table class="case-table">
                  <caption class="visually-hidden">{status === "" ? "Agents" : `${status} agents`}, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Slug</th>
                      <th scope="col">Status</th>
                      <th scope="col">Version</th>
                      <th scope="col">Actions</th>
                      <th scope="col">Registered</th>
                    </tr>
                  </thead>
                  <tbody>
                    {answer.agents.map((agent) => (
                      <tr key={agent.agent_slug} data-agent={agent.agent_slug}>
                        <td data-label="Name" class="wrap">
                          <Link href={agentHref(agent.agent_slug)}>{agent.name}</Link>
                        </td>
                        <td data-label="Slug">
                          <code class="wrap">{agent.agent_slug}</code>
                        </td>
                        <td data-label="Status">
                          <span class={`agent-status agent-status-${agent.status}`}>{agent.status}</span>
                        </td>
                        <td data-label="Version">{agent.current_version ?? "none"}</td>
                        <td data-label="Actions">{agent.action_count}</td>
                        <td data-label="Registered">
                          <time dateTime={agent.created_at}>{localTime(agent.created_at)}</time>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <Pager pagination={answer.pagination} search={search} label="Agents" />
          </>
        )}
      </LoadView>
    </main>
  )
}
