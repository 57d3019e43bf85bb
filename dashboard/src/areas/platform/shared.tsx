/** Small pieces the platform sections share. */
import { type Pagination, PER_PAGE } from "../../kit.tsx"

/** One page of a list the API answers whole (the catalogue, custom models, flags), as the Pager expects it. */
export const pageSlice = <T,>(items: ReadonlyArray<T>, page: number): { readonly items: ReadonlyArray<T>; readonly pagination: Pagination } => {
  const last = Math.max(1, Math.ceil(items.length / PER_PAGE))
  const current = Math.min(page, last)
  return {
    items: items.slice((current - 1) * PER_PAGE, current * PER_PAGE),
    pagination: { page: current, per_page: PER_PAGE, total: items.length, has_more: current < last }
  }
}

export const yesNo = (value: boolean) => (value ? "yes" : "no")

/** Lines or commas → trimmed non-empty entries. */
export const listOf = (text: string): Array<string> =>
  text
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
