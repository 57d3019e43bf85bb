/**
 * The health vocabularies of the sanitizer (issue 31): the ICD-10-CM code list, conditions and medications, read
 * from ./data/ once, on first use, and the word scanner that finds their terms in a text without one regex per
 * term: a table of first-three-character keys rejects almost every word before any string is made, then a map from
 * the first word to the terms it starts decides.
 */
import { readFileSync } from "node:fs"

const readData = (name: string): string => readFileSync(new URL(`./data/${name}`, import.meta.url), "utf8")

// ---------------------------------------------------------------- ICD-10-CM

/** Category → the rest of its longer codes, split into a set on first use of that category. */
let icdLines: Map<string, string> | null = null
const icdSets = new Map<string, ReadonlySet<string>>()

const icdCategory = (category: string): ReadonlySet<string> | null => {
  if (icdLines === null) {
    icdLines = new Map()
    for (const line of readData("icd10cm-codes.txt").split("\n")) {
      if (line.length >= 3 && !line.startsWith("#")) icdLines.set(line.slice(0, 3), line.slice(4))
    }
  }
  const known = icdSets.get(category)
  if (known !== undefined) return known
  const rest = icdLines.get(category)
  if (rest === undefined) return null
  const set = new Set(rest.length === 0 ? [] : rest.split(" "))
  icdSets.set(category, set)
  return set
}

/** "e11.65" → "E1165"; null when it is not shaped like an ICD-10-CM code (letter, digit, digit-or-letter, up to 4 more, one optional dot after the third). */
export const normalizeIcd10 = (raw: string): string | null => {
  const upper = raw.toUpperCase()
  const m = /^([A-Z][0-9][0-9A-Z])(?:\.?([0-9A-Z]{1,4}))?$/.exec(upper)
  if (m === null) return null
  return m[1]! + (m[2] ?? "")
}

/** True when the code (with or without its dot, any case) is in the ICD-10-CM list. */
export const icd10Valid = (raw: string): boolean => {
  const code = normalizeIcd10(raw)
  if (code === null) return false
  const rest = icdCategory(code.slice(0, 3))
  return rest !== null && (code.length === 3 || rest.has(code.slice(3)))
}

// ---------------------------------------------------------------- words

/** Letters (ASCII and Latin-1/Latin Extended-A), digits and the apostrophe make words. */
export const isWordCode = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 39 || c === 0x2019 || (c >= 0xc0 && c <= 0x17f && c !== 0xd7 && c !== 0xf7)

/** Whether a word begins at `i`: a word character with none right before it. */
export const isWordStart = (text: string, i: number): boolean => isWordCode(text.charCodeAt(i)) && (i === 0 || !isWordCode(text.charCodeAt(i - 1)))

/** 0 end, 1-26 letters, 27-36 digits, 37 anything else that makes a word. */
const symbol = (c: number): number => {
  if (c >= 97 && c <= 122) return c - 96
  if (c >= 65 && c <= 90) return c - 64
  if (c >= 48 && c <= 57) return c - 21
  return 37
}
const KEY_BASE = 38
const KEY_SIZE = KEY_BASE * KEY_BASE * KEY_BASE * KEY_BASE
const keyAt = (text: string, start: number, end: number): number => {
  const a = symbol(text.charCodeAt(start))
  const b = start + 1 < end ? symbol(text.charCodeAt(start + 1)) : 0
  const c = start + 2 < end ? symbol(text.charCodeAt(start + 2)) : 0
  const d = start + 3 < end ? symbol(text.charCodeAt(start + 3)) : 0
  return ((a * KEY_BASE + b) * KEY_BASE + c) * KEY_BASE + d
}
const keyOf = (word: string): number => keyAt(word, 0, word.length)

/** A key table of some words: `inTable` rejects most other words without making a string. */
export const keyTable = (words: Iterable<string>): Uint8Array => {
  const table = new Uint8Array(KEY_SIZE)
  for (const w of words) table[keyOf(w)] = 1
  return table
}
export const inTable = (table: Uint8Array, text: string, start: number, end: number): boolean => table[keyAt(text, start, end)] === 1

export const wordAt = (text: string, start: number, end: number): string => {
  const word = text.slice(start, end).toLowerCase()
  return word.includes("\u2019") ? word.replace(/\u2019/g, "'") : word
}

/** Words of a term, the way the scanner cuts a text: runs of word characters. */
const wordsOf = (term: string): Array<string> => term.match(/[a-z0-9\u00c0-\u017f']+/gi) ?? []

export interface Term {
  /** Words after the first, lower case (or as written when caseSensitive). */
  readonly rest: ReadonlyArray<string>
  readonly caseSensitive: boolean
  /** "!": an everyday word too. */
  readonly ambiguous: boolean
  /** "^": needs a body site. */
  readonly needsSite: boolean
  /** The first word as written (case-sensitive terms compare it exactly). */
  readonly first: string
}

export interface Lexicon {
  /** First word (lower case) → terms starting with it, longest first. */
  readonly byFirst: ReadonlyMap<string, ReadonlyArray<Term>>
  /** Keys of first words: 1 when some term starts with a word of that key. */
  readonly keys: Uint8Array
  /** Every word of every term, lower case (modifier joining). */
  readonly words: ReadonlySet<string>
}

const buildLexicon = (lines: ReadonlyArray<string>): Lexicon => {
  const byFirst = new Map<string, Array<Term>>()
  const keys = new Uint8Array(KEY_SIZE)
  const words = new Set<string>()
  for (const raw of lines) {
    let line = raw.trim()
    if (line.length === 0 || line.startsWith("#")) continue
    let ambiguous = false
    let caseSensitive = false
    let needsSite = false
    for (;;) {
      if (line.startsWith("!")) ambiguous = true
      else if (line.startsWith("=")) caseSensitive = true
      else if (line.startsWith("^")) needsSite = true
      else break
      line = line.slice(1)
    }
    const ws = wordsOf(line)
    if (ws.length === 0) continue
    const first = ws[0]!
    const lowerFirst = first.toLowerCase()
    keys[keyOf(lowerFirst)] = 1
    for (const w of ws) words.add(w.toLowerCase())
    const rest = ws.slice(1).map((w) => (caseSensitive ? w : w.toLowerCase()))
    const list = byFirst.get(lowerFirst) ?? []
    list.push({ rest, caseSensitive, ambiguous, needsSite, first })
    byFirst.set(lowerFirst, list)
  }
  for (const list of byFirst.values()) list.sort((a, b) => b.rest.length - a.rest.length)
  return { byFirst, keys, words }
}

let conditions: { lexicon: Lexicon; sites: ReadonlySet<string> } | null = null
let medications: Lexicon | null = null

export const conditionLexicon = (): { lexicon: Lexicon; sites: ReadonlySet<string> } => {
  if (conditions !== null) return conditions
  const text = readData("health-conditions.txt")
  const at = text.indexOf("\n[sites]") + 1
  const terms = text.slice(text.indexOf("\n[conditions]") + "\n[conditions]".length, at).split("\n")
  const sites = new Set(wordsOf(text.slice(at + "[sites]".length)).map((w) => w.toLowerCase()))
  conditions = { lexicon: buildLexicon(terms), sites }
  return conditions
}

export const medicationLexicon = (): Lexicon => {
  if (medications !== null) return medications
  medications = buildLexicon(readData("health-medications.txt").split("\n"))
  return medications
}

/** Whether the word starting at `start` could be a first word of the lexicon (no string made). */
export const mayStart = (lexicon: Lexicon, text: string, start: number, end: number): boolean => lexicon.keys[keyAt(text, start, end)] === 1

/** End of the word starting at `start`. */
export const wordEnd = (text: string, start: number): number => {
  let i = start
  while (i < text.length && isWordCode(text.charCodeAt(i))) i++
  // A trailing apostrophe ("patients'") is not part of the word.
  while (i > start + 1 && (text.charCodeAt(i - 1) === 39 || text.charCodeAt(i - 1) === 0x2019)) i--
  return i
}

/** Start of the next word after `from` when only spaces and at most one `-`, `/` or `.` stand between (≤ 3 characters); -1 otherwise. */
export const nextWord = (text: string, from: number, allowComma = false): number => {
  let i = from
  let marks = 0
  while (i < text.length && i - from <= 3) {
    const c = text.charCodeAt(i)
    if (c === 32 || c === 9) i++
    else if ((c === 45 || c === 47 || c === 46 || (allowComma && c === 44)) && marks === 0) {
      marks++
      i++
    } else break
  }
  return i < text.length && i - from <= 3 && isWordCode(text.charCodeAt(i)) ? i : -1
}

/** Start of the word before `before` (the position after its last character) when only spaces and at most one `-` or `/` stand between; -1 otherwise. */
export const previousWord = (text: string, before: number): { start: number; end: number } | null => {
  let i = before
  let marks = 0
  while (i > 0 && before - i <= 3) {
    const c = text.charCodeAt(i - 1)
    if (c === 32 || c === 9) i--
    else if ((c === 45 || c === 47) && marks === 0) {
      marks++
      i--
    } else break
  }
  if (i === before || i === 0 || !isWordCode(text.charCodeAt(i - 1)) || before - i > 3) return null
  const end = i
  let start = end
  while (start > 0 && isWordCode(text.charCodeAt(start - 1)) && end - start < 40) start--
  return { start, end }
}

/** The longest term of the lexicon starting at the word [start, end); its end, or -1. */
export const matchTerm = (lexicon: Lexicon, text: string, start: number, end: number): { end: number; term: Term } | null => {
  const first = wordAt(text, start, end)
  const terms = lexicon.byFirst.get(first)
  if (terms === undefined) return null
  for (const term of terms) {
    if (term.caseSensitive && text.slice(start, end) !== term.first) continue
    let at = end
    let ok = true
    for (const w of term.rest) {
      const next = nextWord(text, at)
      if (next === -1) {
        ok = false
        break
      }
      const e = wordEnd(text, next)
      const word = term.caseSensitive ? text.slice(next, e) : wordAt(text, next, e)
      if (word !== w) {
        ok = false
        break
      }
      at = e
    }
    if (ok) return { end: at, term }
  }
  return null
}
