/**
 * Values in pasted tables (CSV, TSV, semicolon exports, psql and markdown tables): a header line
 * names the columns, and a cell under a column named like a birth date, a bank account, an identity
 * number, a phone or an address is that, whatever it looks like on its own ("21-03-1993",
 * "43819027"). Person-name columns are read by names.ts. One pass over the lines; at most
 * `MAX_TABLE_LINES` lines are read per scan.
 */
import type { Detector, Emit } from "./detector.js"
import { MAX_HITS_PER_DETECTOR } from "./detector.js"
import { EMPLOYER_ID } from "./personal.js"
import { secretName, secretValue } from "./tokens.js"
import type { Library, Severity } from "./types.js"

type ColumnKind = "date_of_birth" | "bank_account" | "national_id" | "phone_number" | "street_address" | "generic_secret"

const COLUMN_NAMES: ReadonlyArray<readonly [ColumnKind, RegExp]> = [
  ["date_of_birth", /^(?:dob|d\.o\.b\.?|date[ _-]?of[ _-]?birth|birth[ _-]?date|birthday|geburtsdatum|fecha[ _-]de[ _-]nacimiento|date[ _-]de[ _-]naissance)$/i],
  [
    "bank_account",
    /^(?:bank[ _-]?acc(?:oun)?t(?:[ _-]?(?:no|number|num))?|acc(?:oun)?t[ _-]?(?:no|number|num)|account|acct|sort[ _-]?code|routing(?:[ _-]?(?:no|number))?|bsb|kontonummer)$/i
  ],
  ["national_id", /^(?:ssn|nin|nino|ni[ _-]?(?:no|number)|national[ _-]?id|passport(?:[ _-]?(?:no|number))?|pan|aadhaar|tax[ _-]?id|tin|bsn|pesel|nhs(?:[ _-]?(?:no|number))?|sin|dni|nie|cpf|curp)$/i],
  ["phone_number", /^(?:phone|mobile|cell|tel|telephone|phone[ _-]?(?:no|number)|mobile[ _-]?(?:no|number)|contact[ _-]?(?:no|number)|telefon|t[ée]l[ée]phone|tel[ée]fono)$/i],
  ["street_address", /^(?:address|street|addr|address[ _-]?(?:line)?[ _-]?1|street[ _-]?address|home[ _-]?address|adresse|direcci[oó]n|indirizzo|adres)$/i]
]

const MAX_TABLE_LINES = 5_000
const DELIMITERS = [",", ";", "\t", "|"] as const

interface Cell {
  readonly start: number
  readonly end: number
}

/** Splits one line into cells (offsets into the text), honouring double quotes around a cell. */
const cellsOf = (text: string, lineStart: number, lineEnd: number, delimiter: string): Array<Cell> => {
  const cells: Array<Cell> = []
  let i = lineStart
  while (i <= lineEnd) {
    let start = i
    let end: number
    if (text[i] === '"') {
      const close = text.indexOf('"', i + 1)
      if (close === -1 || close > lineEnd) return []
      start = i + 1
      end = close
      i = close + 1
      while (i < lineEnd && text[i] !== delimiter) i++
    } else {
      end = text.indexOf(delimiter, i)
      if (end === -1 || end > lineEnd) end = lineEnd
      i = end
    }
    while (start < end && /\s/.test(text[start]!)) start++
    while (end > start && /\s/.test(text[end - 1]!)) end--
    if (start < end && text[start] === '"' && text[end - 1] === '"') {
      start++
      end--
    }
    cells.push({ start, end })
    i++
  }
  return cells
}

/** Secret columns are named as secret keys are (`api_token`, `password_hash` is not one: see tokens.ts). */
const kindOf = (header: string): ColumnKind | undefined =>
  COLUMN_NAMES.find(([, pattern]) => pattern.test(header))?.[0] ?? (/^[A-Za-z][\w .-]{0,40}$/.test(header) && secretName(header) ? "generic_secret" : undefined)

/** What a cell under each kind of column must look like to count. */
const CELL_SHAPES: Readonly<Record<ColumnKind, RegExp>> = {
  date_of_birth: /^[0-9]{1,4}[/.\- ][0-9]{1,2}[/.\- ][0-9]{1,4}$|^[A-Za-z]{3,9}\.? [0-9]{1,2},? [0-9]{4}$|^[0-9]{1,2} [A-Za-z]{3,9}\.? [0-9]{4}$/,
  bank_account: /^[0-9][0-9 .\-/]{3,32}[0-9]$/,
  national_id: /^(?=.*[0-9].*[0-9].*[0-9].*[0-9])[A-Z0-9][A-Z0-9 .-]{3,22}[A-Z0-9]$/,
  phone_number: /^\+?[0-9(][0-9 ().-]{5,20}[0-9]$/,
  street_address: /^(?=.*[0-9])(?=.*\p{L}{3}).{6,120}$/u,
  generic_secret: /^\S{8,512}$/
}

interface Found {
  readonly kind: ColumnKind
  readonly start: number
  readonly end: number
}

let lastText: string | undefined
let lastFound: Array<Found> = []

/** Every cell under a recognised column, over all tables of the text (memoized for the current text). */
const tableCells = (text: string): Array<Found> => {
  if (text === lastText) return lastFound
  const found: Array<Found> = []
  let lines = 0
  let header: { delimiter: string; kinds: Array<ColumnKind | undefined>; count: number } | undefined
  let misses = 0
  for (let lineStart = 0; lineStart < text.length && lines < MAX_TABLE_LINES; lines++) {
    let lineEnd = text.indexOf("\n", lineStart)
    if (lineEnd === -1) lineEnd = text.length
    if (header !== undefined) {
      const cells = cellsOf(text, lineStart, lineEnd, header.delimiter)
      if (/^[\s|:+-]*$/.test(text.slice(lineStart, lineEnd)) && lineEnd > lineStart) {
        // psql and markdown rule lines under the header.
      } else if (cells.length === header.count || (header.delimiter === "|" && Math.abs(cells.length - header.count) <= 1)) {
        misses = 0
        cells.forEach((cell, i) => {
          const kind = header!.kinds[i]
          if (kind === undefined || cell.end <= cell.start) return
          const value = text.slice(cell.start, cell.end)
          if (!CELL_SHAPES[kind].test(value) || (kind === "national_id" && EMPLOYER_ID.test(value))) return
          if (kind === "generic_secret" && !secretValue(value, false)) return
          found.push({ kind, start: cell.start, end: cell.end })
        })
      } else if (++misses > 1) {
        header = undefined
      }
    }
    if (header === undefined) header = headerOf(text, lineStart, lineEnd)
    lineStart = lineEnd + 1
  }
  lastText = text
  lastFound = found
  return found
}

/** Some column name of COLUMN_NAMES is in the line: most lines are not headers, and say so without a split. */
const HEADER_HINT = /secret|token|key|pass|pwd|cookie|salt|dob|d\.o\.b|birth|geburt|nacimiento|naissance|acc|sort|routing|bsb|konto|ssn|nin|ni[ _-]|national|passport|pan|aadhaar|tax|tin|bsn|pesel|nhs|sin|dni|nie|cpf|curp|phone|mobile|cell|tel|addr|street|adres|direcci|indirizzo/i

/** Whether `delimiter` occurs at least twice in `line` (searched within the line only: the scan stays linear). */
const twice = (line: string, delimiter: string): boolean => {
  const first = line.indexOf(delimiter)
  return first !== -1 && line.indexOf(delimiter, first + 1) !== -1
}

const headerOf = (text: string, lineStart: number, lineEnd: number) => {
  if (lineEnd - lineStart > 2_000 || lineEnd - lineStart < 5) return undefined
  const line = text.slice(lineStart, lineEnd)
  let hinted: boolean | undefined
  for (const delimiter of DELIMITERS) {
    if (!twice(line, delimiter)) continue
    hinted ??= HEADER_HINT.test(line)
    if (!hinted) return undefined
    const cells = cellsOf(text, lineStart, lineEnd, delimiter)
    const names = cells.map((c) => text.slice(c.start, c.end))
    // A header is words, not values: no cell with digits beyond a trailing number ("address_line1").
    if (names.some((n) => /[0-9]{2}|[@:/]/.test(n))) continue
    const kinds = names.map(kindOf)
    if (kinds.some((k) => k !== undefined)) return { delimiter, kinds, count: cells.length }
  }
  return undefined
}

/** Lets the next scan's text be held without keeping this one alive. */
export const forgetTables = (): void => {
  lastText = undefined
  lastFound = []
}

const SEVERITY: Readonly<Record<ColumnKind, Severity>> = {
  date_of_birth: "warning",
  bank_account: "critical",
  national_id: "critical",
  phone_number: "warning",
  street_address: "warning",
  generic_secret: "critical"
}

const column = (kind: ColumnKind, library: Library, description: string): Detector => ({
  entity_type: kind,
  library,
  severity: SEVERITY[kind],
  description,
  run: (text: string, emit: Emit) => {
    if (!text.includes("\n")) return
    let hits = 0
    for (const f of tableCells(text)) {
      if (f.kind !== kind) continue
      if (!emit(f.start, f.end) || ++hits >= MAX_HITS_PER_DETECTOR) return
    }
  }
})

export const TABLE_DETECTORS: ReadonlyArray<Detector> = [
  column("date_of_birth", "pii", "Date of birth in a table column named for it"),
  column("bank_account", "pii", "Bank account number in a table column named for it"),
  column("national_id", "pii", "Identity number in a table column named for it"),
  column("phone_number", "pii", "Telephone number in a table column named for it"),
  column("street_address", "pii", "Street address in a table column named for it")
]

/** Secrets in columns named as secret keys are (`api_token`, `webhook_secret`): part of the `credentials` library. */
export const TABLE_SECRET_DETECTOR: Detector = column("generic_secret", "credentials", "Secret value in a table column named for it")
