/**
 * A lower-case "reading view" of a text for the prompt-injection patterns: what a model would
 * read, with the disguises people use to slip past filters taken off (NFKC/NFKD forms, accents,
 * invisible characters, Unicode tag characters, Cyrillic/Greek look-alikes, letters spaced or
 * dotted apart, leetspeak). Every character of the view remembers the [start, end) of the
 * original characters it came from, so a match in the view maps back to the original text.
 * One pass per stage, each linear.
 */

export interface ReadingView {
  readonly text: string
  /** Original start of view character i. */
  readonly starts: Int32Array
  /** Original end of view character i. */
  readonly ends: Int32Array
}

/** Look-alikes NFKD leaves alone (Cyrillic, Greek, a few Latin variants) folded to ASCII. */
const HOMOGLYPHS: Readonly<Record<string, string>> = {
  а: "a", в: "b", е: "e", ё: "e", к: "k", м: "m", н: "h", о: "o", р: "p", с: "c", т: "t", у: "y", х: "x",
  і: "i", ї: "i", ј: "j", ѕ: "s", ԁ: "d", ԛ: "q", ԝ: "w", ӏ: "l", һ: "h", ɡ: "g", ı: "i", ȷ: "j", ℓ: "l",
  α: "a", β: "b", γ: "y", ε: "e", η: "n", ι: "i", κ: "k", ν: "v", ο: "o", ρ: "p", τ: "t", υ: "u", χ: "x", ω: "w", ϲ: "c", ϳ: "j",
  ß: "ss", æ: "ae", œ: "oe", ø: "o", đ: "d", ħ: "h", ł: "l", ŧ: "t"
}

/** Format and filler characters that render as nothing, as [first, last] code point ranges. */
const INVISIBLE: ReadonlyArray<readonly [number, number]> = [
  [0xad, 0xad], [0x34f, 0x34f], [0x61c, 0x61c], [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x200b, 0x200f],
  [0x202a, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164], [0xfe00, 0xfe0f], [0xfeff, 0xfeff], [0xffa0, 0xffa0]
]

const invisible = (cp: number): boolean => INVISIBLE.some(([first, last]) => cp >= first && cp <= last)

const COMBINING = /\p{M}/gu

const folded = new Map<string, string>()

/** The view characters of one original code point ("" drops it). */
const fold = (ch: string, cp: number): string => {
  if (cp < 0x80) return ch.toLowerCase()
  // Unicode tag characters spell ASCII invisibly ("ASCII smuggling"): read them as that ASCII.
  if (cp >= 0xe0000 && cp <= 0xe007f) return cp >= 0xe0020 && cp <= 0xe007e ? String.fromCharCode(cp - 0xe0000).toLowerCase() : ""
  if ((cp >= 0xe0100 && cp <= 0xe01ef) || (cp >= 0x1d173 && cp <= 0x1d17a)) return ""
  const known = folded.get(ch)
  if (known !== undefined) return known
  let out: string
  if (invisible(cp)) out = ""
  else {
    const lower = ch.toLowerCase()
    const direct = HOMOGLYPHS[lower]
    if (direct !== undefined) out = direct
    else {
      const decomposed = lower.normalize("NFKD").replace(COMBINING, "").toLowerCase()
      out = ""
      for (const c of decomposed) out += HOMOGLYPHS[c] ?? c
    }
  }
  if (folded.size < 10_000) folded.set(ch, out)
  return out
}

const isAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57)

/**
 * Three isolated letters with the same spacer between them, wherever a spelled-out word would start: texts
 * without one skip the join (digits alone, "1 2 3 4", are tables and phone numbers, not spelled words).
 */
const SPELLED_RUN = /(?<![a-z0-9])[a-z]([ ._*|/,+~·•-])[a-z]\1[a-z](?![a-z0-9])/

/** Single characters people put between the letters of a spelled-out word. */
const SPACERS = new Set([" ", ".", "-", "_", "*", "|", "/", ",", "+", "~", "·", "•"])
const SPACER_CODES: ReadonlySet<number> = new Set([...SPACERS].map((spacer) => spacer.charCodeAt(0)))

/** Leetspeak digits and signs (by char code), folded only inside tokens that also hold letters. */
const LEET = new Map<number, number>(
  Object.entries({ "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "9": "g", $: "s", "@": "a" }).map(([k, v]) => [k.charCodeAt(0), v.charCodeAt(0)])
)
const DOLLAR = 36
const AT = 64

/** Growable view under construction: UTF-16 code units plus their original offsets. */
class Builder {
  private units: Uint16Array
  private starts: Int32Array
  private ends: Int32Array
  private length = 0
  constructor(capacity: number) {
    this.units = new Uint16Array(Math.max(16, capacity))
    this.starts = new Int32Array(this.units.length)
    this.ends = new Int32Array(this.units.length)
  }
  private grow(): void {
    const size = this.units.length * 2
    const units = new Uint16Array(size)
    units.set(this.units)
    const starts = new Int32Array(size)
    starts.set(this.starts)
    const ends = new Int32Array(size)
    ends.set(this.ends)
    this.units = units
    this.starts = starts
    this.ends = ends
  }
  unit(code: number, start: number, end: number): void {
    if (this.length === this.units.length) this.grow()
    this.units[this.length] = code
    this.starts[this.length] = start
    this.ends[this.length] = end
    this.length++
  }
  push(chars: string, start: number, end: number): void {
    for (let i = 0; i < chars.length; i++) this.unit(chars.charCodeAt(i), start, end)
  }
  /** Copies view characters [from, to) as they are: offsets in bulk, code units in one loop. */
  copy(view: ReadingView, from: number, to: number): void {
    const count = to - from
    if (count <= 0) return
    while (this.length + count > this.units.length) this.grow()
    const { text } = view
    for (let p = from, q = this.length; p < to; p++, q++) this.units[q] = text.charCodeAt(p)
    this.starts.set(view.starts.subarray(from, to), this.length)
    this.ends.set(view.ends.subarray(from, to), this.length)
    this.length += count
  }
  /** Lower-cased ASCII characters [from, to) of the original text, one view character each. */
  ascii(original: string, from: number, to: number): void {
    const count = to - from
    if (count <= 0) return
    while (this.length + count > this.units.length) this.grow()
    for (let p = from, q = this.length; p < to; p++, q++) {
      const c = original.charCodeAt(p)
      this.units[q] = c >= 65 && c <= 90 ? c + 32 : c
      this.starts[q] = p
      this.ends[q] = p + 1
    }
    this.length += count
  }
  build(): ReadingView {
    const units = this.units.subarray(0, this.length)
    return { text: UTF16.decode(units), starts: this.starts.slice(0, this.length), ends: this.ends.slice(0, this.length) }
  }
}

const UTF16 = new TextDecoder("utf-16le")

/** Folds code points: NFKD without accents, look-alikes, tag characters, invisible characters. */
const foldCharacters = (original: string): ReadingView => {
  // Plain ASCII (most traffic): lower-casing is the whole fold, one character for one.
  if (!/[\u0080-\uffff]/.test(original)) {
    const starts = new Int32Array(original.length)
    const ends = new Int32Array(original.length)
    for (let i = 0; i < original.length; i++) {
      starts[i] = i
      ends[i] = i + 1
    }
    return { text: original.toLowerCase(), starts, ends }
  }
  const out = new Builder(original.length + 16)
  let i = 0
  while (i < original.length) {
    const c = original.charCodeAt(i)
    if (c < 0x80) {
      // A run of ASCII in one call.
      let j = i + 1
      while (j < original.length && original.charCodeAt(j) < 0x80) j++
      out.ascii(original, i, j)
      i = j
      continue
    }
    const cp = original.codePointAt(i)!
    const width = cp > 0xffff ? 2 : 1
    out.push(fold(original.slice(i, i + width), cp), i, i + width)
    i += width
  }
  return out.build()
}

/**
 * Joins letters spelled out one by one with the same single spacer ("i g n o r e",
 * "i.g.n.o.r.e"): three or more isolated letters in a row ("a l l") become one word.
 */
const joinSpelledLetters = (view: ReadingView): ReadingView => {
  const { text } = view
  // Most texts hold no such run: one native scan says so before the character loop.
  if (!SPELLED_RUN.test(text)) return view
  const n = text.length
  const isolatedAt = (p: number) => p < n && isAlnum(text.charCodeAt(p)) && (p === 0 || !isAlnum(text.charCodeAt(p - 1))) && (p + 1 >= n || !isAlnum(text.charCodeAt(p + 1)))
  let out: Builder | undefined
  let copied = 0
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (!isAlnum(c)) {
      i++
      continue
    }
    // Inside a word of two or more characters: skip to its end (no letter of it is isolated).
    if (i + 1 < n && isAlnum(text.charCodeAt(i + 1))) {
      i += 2
      while (i < n && isAlnum(text.charCodeAt(i))) i++
      continue
    }
    const spacer = i + 1 < n ? text.charCodeAt(i + 1) : -1
    if (spacer >= 0 && SPACER_CODES.has(spacer) && isolatedAt(i)) {
      let last = i
      let count = 1
      while (last + 2 < n && text.charCodeAt(last + 1) === spacer && isolatedAt(last + 2)) {
        last += 2
        count++
      }
      if (count >= 3) {
        // Built only once a run shows up: most texts have none and keep their view.
        out ??= new Builder(n)
        out.copy(view, copied, i)
        for (let p = i; p <= last; p += 2) out.unit(text.charCodeAt(p), view.starts[p]!, view.ends[p]!)
        i = last + 1
        copied = i
        continue
      }
      i = last + 1
      continue
    }
    i++
  }
  if (out === undefined) return view
  out.copy(view, copied, n)
  return out.build()
}

/** Folds leetspeak in tokens that mix letters with digits or signs ("1gn0r3", "pr3v10u5"). */
const foldLeet = (view: ReadingView): ReadingView => {
  const { text } = view
  if (!/[a-z][0-9$@]|[0-9$@][a-z]/.test(text)) return view
  let units: Uint16Array | undefined
  const inToken = (c: number) => isAlnum(c) || LEET.has(c)
  let i = 0
  while (i < text.length) {
    if (!inToken(text.charCodeAt(i))) {
      i++
      continue
    }
    let j = i
    let letters = 0
    let digits = 0
    let signs = 0
    for (; j < text.length; j++) {
      const c = text.charCodeAt(j)
      if (c >= 97 && c <= 122) letters++
      else if (c >= 48 && c <= 57) digits++
      else if (c === DOLLAR || c === AT) signs++
      else break
    }
    // An e-mail's "@" or a price's "$" alone is not leetspeak: signs count only next to digits.
    if (letters > 0 && digits + signs > 0 && j - i >= 3 && (digits > 0 || signs === 0)) {
      if (units === undefined) {
        units = new Uint16Array(text.length)
        for (let p = 0; p < text.length; p++) units[p] = text.charCodeAt(p)
      }
      for (let p = i; p < j; p++) units[p] = LEET.get(units[p]!) ?? units[p]!
    }
    i = j
  }
  return units === undefined ? view : { text: UTF16.decode(units), starts: view.starts, ends: view.ends }
}

export const readingView = (original: string): ReadingView => foldLeet(joinSpelledLetters(foldCharacters(original)))

/** rot13 of the view's letters; offsets unchanged. One typed pass (a replace callback per letter cost ~70 ms per MB). */
export const rot13 = (text: string): string => {
  const units = new Uint16Array(text.length)
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    units[i] = c >= 97 && c <= 122 ? ((c - 97 + 13) % 26) + 97 : c
  }
  return UTF16.decode(units)
}

/**
 * The word "rot13", or the rot13 forms of words every injection family uses (assistant, conversation,
 * terminal, delete, execute, password, ignore, disregard, forget, instructions, prompt, system, previous,
 * pretend, jailbreak, reveal, override): a text holding none of them has no rot13
 * injection, and is not scanned a second time.
 */
export const ROT13_HINT = /rot-?13|nffvfgnag|pbairefngvba|grezvany|qryrgr|rkrphgr|cnffjbeq|vtaber|qvfertneq|sbetrg|vafgehpgvba|cebzcg|flfgrz|cerivbhf|cergraq|wnvyoernx|erirny|bireevqr/

/**
 * Base64 runs long enough to carry a sentence; bounded, and tried only where a run starts (without the
 * lookbehind the engine retried inside every word, quadratic in word length).
 */
const BASE64 = /(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{20,4000}={0,2}/g

/** Base64 fragments of the original text that decode to readable text, with their spans. */
export const base64Fragments = (original: string): Array<{ start: number; end: number; decoded: string }> => {
  const out: Array<{ start: number; end: number; decoded: string }> = []
  for (const match of original.matchAll(BASE64)) {
    const token = match[0]
    // Real base64 of prose mixes cases; long single-case or digit runs are ids and hashes.
    if (!/[a-z]/.test(token) || !/[A-Z]/.test(token)) continue
    const bytes = Buffer.from(token, "base64")
    let readable = 0
    let letters = 0
    for (const b of bytes) {
      if ((b >= 0x20 && b <= 0x7e) || b === 0x0a || b === 0x09) readable++
      if ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x20) letters++
    }
    if (bytes.length === 0 || readable < bytes.length * 0.95 || letters < bytes.length * 0.7) continue
    out.push({ start: match.index, end: match.index + token.length, decoded: bytes.toString("latin1") })
    if (out.length >= 1_000) break
  }
  return out
}
