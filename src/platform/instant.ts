/** ISO 8601 instants as the API reads them (evidence filters, compliance periods, DORA times). */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i
const DAY_MS = 86_400_000

/**
 * An ISO 8601 date or date-time as epoch milliseconds (no zone: UTC); undefined when it is not one.
 * A date alone is that day's start, or with `endOfDay` its last millisecond (an inclusive `date_to`).
 */
export const parseInstant = (value: string, endOfDay = false): number | undefined => {
  if (DATE_ONLY.test(value)) {
    const start = Date.parse(`${value}T00:00:00Z`)
    return Number.isNaN(start) ? undefined : endOfDay ? start + DAY_MS - 1 : start
  }
  const match = DATE_TIME.exec(value)
  if (match === null) return undefined
  const zone = match[1]
  // Date.parse wants the offset as ±hh:mm.
  const at = Date.parse(zone === undefined ? `${value}Z` : /^[+-]\d{4}$/.test(zone) ? `${value.slice(0, -5)}${zone.slice(0, 3)}:${zone.slice(3)}` : value)
  return Number.isNaN(at) ? undefined : at
}
