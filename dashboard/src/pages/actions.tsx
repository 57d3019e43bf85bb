/** The organization's actions, filtered and paged; the filters live in the address so back/forward and links keep them. */

import { useEffect, useState } from "preact/hooks"
import { ActionStatuses } from "../../../protocol/lists.ts"
import { type ActionFilters, ApiError, listActions } from "../api.ts"
import { PageHeading } from "../components.tsx"
import { useApp } from "../context.ts"
import { localTime, statusLabel } from "../format.ts"
import { FilterSelect } from "../kit.tsx"
import { BASE, navigate, onLinkClick } from "../router.ts"
import type { ActionList } from "../types.ts"

const STATUSES = ActionStatuses

const PER_PAGE = 25

interface Query extends ActionFilters {
  readonly page: number
}

const readQuery = (search: string): Query => {
  const params = new URLSearchParams(search)
  const page = Number.parseInt(params.get("page") ?? "1", 10)
  const status = params.get("status") ?? ""
  return {
    page: Number.isSafeInteger(page) && page >= 1 ? page : 1,
    status: (STATUSES as ReadonlyArray<string>).includes(status) ? status : "",
    agent_id: params.get("agent_id") ?? "",
    action_type: params.get("action_type") ?? ""
  }
}

const pathOf = (query: Query) => {
  const params = new URLSearchParams()
  for (const key of ["status", "agent_id", "action_type"] as const) if (query[key]) params.set(key, query[key])
  if (query.page > 1) params.set("page", String(query.page))
  const search = params.toString()
  return `${BASE}/actions${search === "" ? "" : `?${search}`}`
}

type Load =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly list: ActionList }
  | { readonly state: "failed"; readonly message: string }

export const ActionsPage = ({ search }: { search: string }) => {
  const { session } = useApp()
  const query = readQuery(search)
  const [load, setLoad] = useState<Load>({ state: "loading" })
  const [status, setStatus] = useState(query.status ?? "")
  const [agentId, setAgentId] = useState(query.agent_id ?? "")
  const [actionType, setActionType] = useState(query.action_type ?? "")

  useEffect(() => {
    let current = true
    const { page, ...filters } = readQuery(search)
    setLoad({ state: "loading" })
    listActions(session.token, filters, page, PER_PAGE).then(
      (list) => current && setLoad({ state: "ready", list }),
      (cause) => {
        if (current && !(cause instanceof ApiError && cause.status === 401))
          setLoad({ state: "failed", message: cause instanceof Error ? cause.message : "Loading failed." })
      }
    )
    return () => {
      current = false
    }
  }, [session.token, search])

  const apply = (event: Event) => {
    event.preventDefault()
    navigate(pathOf({ page: 1, status, agent_id: agentId.trim(), action_type: actionType.trim() }))
  }

  const pagination = load.state === "ready" ? load.list.pagination : undefined
  // The API counts no further than ten pages ahead of the page asked for (docs/decisions.md
  // "Actions list total"); a total past them is a lower bound.
  const atLeast = pagination !== undefined && pagination.total > (pagination.page + 9) * pagination.per_page ? "+" : ""
  return (
    <main>
      <PageHeading>Actions</PageHeading>
      <form class="filters" onSubmit={apply} aria-label="Filter actions">
        <FilterSelect id="filter-status" label="Status" value={status} choices={STATUSES} onChange={setStatus} text={statusLabel} />
        <div>
          <label for="filter-agent">Agent id</label>
          <input id="filter-agent" value={agentId} maxLength={200} onInput={(event) => setAgentId(event.currentTarget.value)} />
        </div>
        <div>
          <label for="filter-type">Action type</label>
          <input id="filter-type" value={actionType} maxLength={200} onInput={(event) => setActionType(event.currentTarget.value)} />
        </div>
        <button type="submit">Filter</button>
      </form>
      {load.state === "loading" && <p role="status">Loading…</p>}
      {load.state === "failed" && (
        <p role="alert" class="error">
          {load.message}
        </p>
      )}
      {load.state === "ready" && load.list.data.length === 0 && <p class="empty">No actions match.</p>}
      {load.state === "ready" && load.list.data.length > 0 && (
        <div class="table-scroll">
          <table class="actions">
            <caption class="visually-hidden">Actions, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Action type</th>
                <th scope="col">Agent</th>
                <th scope="col">Status</th>
                <th scope="col">Requested</th>
              </tr>
            </thead>
            <tbody>
              {load.list.data.map((action) => (
                <tr key={action.action_uuid}>
                  <td>
                    <a href={`${BASE}/actions/${encodeURIComponent(action.action_uuid)}`} onClick={onLinkClick}>
                      {action.action_type}
                    </a>
                  </td>
                  <td>{action.agent_id ?? "unknown"}</td>
                  <td>
                    <span class={`status status-${action.status}`}>{statusLabel(action.status)}</span>
                  </td>
                  <td>
                    <time dateTime={action.created_at}>{localTime(action.created_at)}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pagination !== undefined && pagination.total > 0 && (
        <nav class="pager" aria-label="Pages">
          {pagination.page > 1 ? (
            <a href={pathOf({ ...query, page: pagination.page - 1 })} onClick={onLinkClick}>
              ← Previous
            </a>
          ) : (
            <span />
          )}
          <span>
            {`Page ${pagination.page} of ${Math.max(1, Math.ceil(pagination.total / pagination.per_page))}${atLeast} (${pagination.total}${atLeast} actions)`}
          </span>
          {pagination.has_more ? (
            <a href={pathOf({ ...query, page: pagination.page + 1 })} onClick={onLinkClick}>
              Next →
            </a>
          ) : (
            <span />
          )}
        </nav>
      )}
    </main>
  )
}
