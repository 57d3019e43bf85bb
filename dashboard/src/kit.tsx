/**
 * What every area page builds on: loading a resource with its loading/empty/error states, filters and
 * the page number kept in the URL (deep links), a pager for lists past one page, section tabs, and a
 * refusal in words. Area pages (dashboard/src/areas/) use these instead of spelling them out again.
 */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { ApiError } from "./api.ts"
import { BASE, navigate, onLinkClick } from "./router.ts"

export type Loaded<T> =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly value: T }
  | { readonly state: "failed"; readonly message: string; readonly status: number }

/** A refused or failed call in words: what the role lacks on 403, "not found" on 404, the API's message otherwise. */
export const problemText = (cause: unknown): string => {
  if (cause instanceof ApiError) {
    if (cause.status === 403) return `You may not see or change this (${cause.message})`
    if (cause.status === 404) return "Not found: it does not exist or belongs to another organization."
    return cause.message
  }
  return cause instanceof Error ? cause.message : "Something went wrong; try again."
}

/**
 * Runs `load` when its dependencies change and on `reload()`; answers that arrive after a newer load
 * started are dropped. A 401 is left to the session handler (the app signs out), so it shows nothing.
 */
export const useLoad = <T,>(load: () => Promise<T>, deps: ReadonlyArray<unknown>) => {
  const [result, setResult] = useState<Loaded<T>>({ state: "loading" })
  const generation = useRef(0)
  const run = useCallback(async (quiet: boolean) => {
    const mine = ++generation.current
    if (!quiet) setResult({ state: "loading" })
    try {
      const value = await load()
      if (mine === generation.current) setResult({ state: "ready", value })
    } catch (cause) {
      if (mine !== generation.current) return
      if (cause instanceof ApiError && cause.status === 401) return
      setResult({ state: "failed", message: problemText(cause), status: cause instanceof ApiError ? cause.status : 0 })
    }
  }, deps)
  useEffect(() => {
    void run(false)
  }, [run])
  /** Loads again keeping what is shown until the answer arrives (after a change the page made). */
  const reload = useCallback(() => run(true), [run])
  return [result, reload] as const
}

/** The three states of a load: a status line, an alert with a retry, or the content. */
export const LoadView = <T,>({
  loaded,
  retry,
  what,
  children
}: {
  loaded: Loaded<T>
  retry?: () => void
  /** What is loading, for the status line ("escrow accounts"). */
  what: string
  children: (value: T) => ComponentChildren
}) => {
  if (loaded.state === "loading")
    return (
      <p role="status" class="loading">
        Loading {what}…
      </p>
    )
  if (loaded.state === "failed")
    return (
      <div role="alert" class="error">
        <p>
          Could not load {what}: {loaded.message}
        </p>
        {retry !== undefined && (
          <button type="button" onClick={retry}>
            Try again
          </button>
        )}
      </div>
    )
  return <>{children(loaded.value)}</>
}

export const Empty = ({ children }: { children: ComponentChildren }) => <p class="empty">{children}</p>

/** An error line after a failed change (create, revoke...), announced to screen readers. */
export const ErrorLine = ({ message }: { message: string | undefined }) =>
  message === undefined ? null : (
    <p role="alert" class="error">
      {message}
    </p>
  )

/**
 * The end of a form: its error, the submit button (disabled while the form is busy) and any other
 * buttons after it.
 */
export const FormFooter = ({ error, busy, label, children }: { error: string | undefined; busy: boolean; label: ComponentChildren; children?: ComponentChildren }) => (
  <>
    <ErrorLine message={error} />
    <div class="actions-row">
      <button type="submit" class="primary" disabled={busy}>
        {label}
      </button>
      {children}
    </div>
  </>
)

/** The query string of the current URL as a plain record. */
export const queryOf = (search: string): Record<string, string> => Object.fromEntries(new URLSearchParams(search))

/**
 * Writes filters into the URL (replacing this history entry) so the page can be linked and reloaded as
 * it is; empty values are dropped and any filter change goes back to the first page.
 */
export const setQuery = (search: string, changes: Record<string, string | undefined>, keepPage = false) => {
  const query = new URLSearchParams(search)
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || value === "") query.delete(key)
    else query.set(key, value)
  }
  if (!keepPage && !("page" in changes)) query.delete("page")
  const text = query.toString()
  navigate(location.pathname + (text === "" ? "" : `?${text}`), true)
}

export const PER_PAGE = 50

/** The page number asked for in the URL (1 when absent or not a positive integer). */
export const pageOf = (search: string): number => {
  const page = Number(new URLSearchParams(search).get("page"))
  return Number.isInteger(page) && page >= 1 ? page : 1
}

export interface Pagination {
  readonly page: number
  readonly per_page: number
  readonly total: number
  readonly has_more: boolean
}

/** Links to the previous and next page (real links: deep-linkable, open in a new tab), with "x–y of n". */
export const Pager = ({ pagination, search, label }: { pagination: Pagination; search: string; label: string }) => {
  const { page, per_page, total, has_more } = pagination
  if (page === 1 && !has_more) return null
  const hrefOf = (target: number) => {
    const query = new URLSearchParams(search)
    if (target === 1) query.delete("page")
    else query.set("page", String(target))
    const text = query.toString()
    return location.pathname + (text === "" ? "" : `?${text}`)
  }
  const first = (page - 1) * per_page + 1
  const last = Math.min(total, page * per_page)
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      {page > 1 ? (
        <a href={hrefOf(page - 1)} onClick={onLinkClick} rel="prev">
          Previous
        </a>
      ) : (
        <span aria-hidden="true" />
      )}
      <span>
        {first}–{last} of {total}
      </span>
      {has_more ? (
        <a href={hrefOf(page + 1)} onClick={onLinkClick} rel="next">
          Next
        </a>
      ) : (
        <span aria-hidden="true" />
      )}
    </nav>
  )
}

export interface Tab {
  readonly href: string
  readonly label: string
  /** Also current on paths under it (`/dashboard/escrow/acc_1` for `/dashboard/escrow`). */
  readonly prefix?: boolean
}

/** The sections of an area (Escrow · Settlements · Evidence · Estate), the current one marked. */
export const AreaTabs = ({ label, tabs }: { label: string; tabs: ReadonlyArray<Tab> }) => {
  const here = location.pathname.replace(/\/+$/, "")
  return (
    <nav class="area-tabs" aria-label={label}>
      {tabs.map((tab) => {
        const href = tab.href.startsWith("/") ? tab.href : `${BASE}/${tab.href}`
        const current = here === href || (tab.prefix !== false && here.startsWith(`${href}/`))
        return (
          <a key={href} href={href} onClick={onLinkClick} aria-current={current ? "page" : undefined}>
            {tab.label}
          </a>
        )
      })}
    </nav>
  )
}

/** A link inside the dashboard (client-side navigation). */
export const Link = ({ href, children, ...rest }: { href: string; children: ComponentChildren; class?: string; "aria-label"?: string }) => (
  <a href={href.startsWith("/") ? href : `${BASE}/${href}`} onClick={onLinkClick} {...rest}>
    {children}
  </a>
)

/** Runs a change (create, revoke...) with a busy flag and an error line; answers whether it worked. */
export const useSubmit = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const submit = useCallback(async (change: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true)
    setError(undefined)
    try {
      await change()
      return true
    } catch (cause) {
      if (!(cause instanceof ApiError && cause.status === 401)) setError(problemText(cause))
      return false
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, submit, setError }
}

/** A list filter's <select>: "Any" (the empty value, no filter), then each choice in its words. */
export const FilterSelect = ({
  id,
  label,
  value,
  choices,
  onChange,
  text = (choice) => choice
}: {
  id: string
  label: string
  value: string
  choices: ReadonlyArray<string>
  onChange: (value: string) => void
  text?: (choice: string) => string
}) => (
  <div>
    <label for={id}>{label}</label>
    <select id={id} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
      <option value="">Any</option>
      {choices.map((choice) => (
        <option key={choice} value={choice}>
          {text(choice)}
        </option>
      ))}
    </select>
  </div>
)
