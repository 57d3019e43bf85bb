/**
 * The `pii_ner` library: person names, organizations, dates and times.
 *
 * Names and organizations come from compromise's own model data (its lexicon of first names,
 * last names, honorifics, known organizations, and its organization words) applied to runs of
 * capitalized words, plus context rules ("Dr.", "Patient:", "Dear ..."). Running compromise's
 * full parser was measured at about 60 KB/s, far too slow for the 500,000-character cap, so
 * this module does one linear pass over the words and looks each one up in that data.
 */
import { createRequire } from "node:module"
import type nlp from "compromise"
import { type Detector, type Emit, MAX_HITS_PER_DETECTOR, regexDetector } from "./detector.js"
import { findPersonNames } from "./names.js"

interface Lexicon {
  /** The first tag compromise gives a word; honorifics are kept apart because they often carry two. */
  readonly tags: ReadonlyMap<string, string>
  readonly honorifics: ReadonlySet<string>
  readonly orgWords: ReadonlySet<string>
}

let lexicon: Lexicon | undefined

/**
 * compromise is loaded by the first scan that needs a name, not at start: with its lexicon it holds
 * ~30 MB that a process which never sanitizes does not need. Synchronously, because the engine is
 * synchronous (the load stalls that scan about half a second, once). Its one-file CommonJS build:
 * the same lexicon as its ES sources (436 modules), loaded in less time and held in less memory.
 */
const loadCompromise = (): typeof nlp => createRequire(import.meta.url)("compromise")

const loadLexicon = (): Lexicon => {
  if (lexicon !== undefined) return lexicon
  const model = loadCompromise().model() as { one: { lexicon: Record<string, string | Array<string>> }; two: { orgWords: Record<string, boolean> } }
  const tags = new Map<string, string>()
  const honorifics = new Set<string>()
  for (const [word, tag] of Object.entries(model.one.lexicon)) {
    const all = Array.isArray(tag) ? tag : [tag]
    if (all.includes("Honorific")) honorifics.add(word)
    tags.set(word, all[0])
  }
  lexicon = { tags, honorifics, orgWords: new Set(Object.keys(model.two.orgWords)) }
  return lexicon
}

const GIVEN_NAME = new Set(["MaleName", "FemaleName", "FirstName"])
const LEGAL_SUFFIX = new Set(["inc", "corp", "llc", "ltd", "co", "plc", "gmbh", "llp", "lp", "ag", "sa", "bv", "pty", "incorporated", "limited"])
/** Words in front of a name that make the next capitalized run a person. */
const PERSON_CONTEXT =
  /(?:patient|pt|name|dear|signed|attn|attention|contact|physician|doctor|nurse|provider|client|employee|witness|plaintiff|defendant|claimant|mother|father|son|daughter|wife|husband|spouse|guardian|patient name|full name|signed by|referred by|seen by)\s{0,2}[:,]?\s{1,3}$/i

interface Word {
  start: number
  end: number
  lower: string
  capitalized: boolean
}

/** Whether each UTF-16 code unit is a letter (\p{L}), computed once on first use: one table read per character. */
let letterTable: Uint8Array | undefined
const letters = (): Uint8Array => {
  if (letterTable !== undefined) return letterTable
  const table = new Uint8Array(65_536)
  const letter = /\p{L}/u
  for (let c = 0; c < 65_536; c++) {
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) table[c] = 1
    else if (c >= 0xaa && (c < 0xd800 || c > 0xdfff) && letter.test(String.fromCharCode(c))) table[c] = 1
  }
  letterTable = table
  return table
}

/**
 * The words of `text`: a letter, then up to 40 letters, apostrophes or hyphens (as /[\p{L}][\p{L}'’-]{0,40}/u
 * would find them). A character loop over a letter table: a regex match per word allocated a match array each.
 */
const wordsOf = (text: string): Array<Word> => {
  const table = letters()
  const words: Array<Word> = []
  const n = text.length
  let i = 0
  while (i < n) {
    if (table[text.charCodeAt(i)] === 0) {
      i++
      continue
    }
    const start = i
    let end = i + 1
    while (end < n && end - start < 41) {
      const c = text.charCodeAt(end)
      if (table[c] === 1 || c === 39 || c === 0x2019 || c === 45) end++
      else break
    }
    i = end
    // A lone lower-case letter ("a", "x@x@…") is never part of a name or an organization, and a run of them
    // would cost an object each; "y" stays, it joins Spanish family names.
    const first = text.charCodeAt(start)
    if (end - start === 1 && first >= 97 && first <= 122 && first !== 121) continue
    const word = text.slice(start, end)
    words.push({ start, end, lower: lowerOf(word), capitalized: isCapitalized(word) })
  }
  return words
}

const isCapitalized = (word: string): boolean => {
  const c = word.charCodeAt(0)
  if (c < 128) return c >= 65 && c <= 90
  const first = word[0]
  return first !== first.toLowerCase() && first === first.toUpperCase()
}

/** Lower case without a new string for the words already in it (most of them). */
const lowerOf = (word: string): string => {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i)
    if ((c >= 65 && c <= 90) || c >= 128) return word.toLowerCase()
  }
  return word
}

interface NerHit {
  start: number
  end: number
  entity_type: "ner_person" | "ner_organization"
}

/** Groups the words into runs of capitalized words joined by a space (or ". " after an initial or title). */
const capitalizedRuns = (text: string, words: ReadonlyArray<Word>): Array<Array<Word>> => {
  const runs: Array<Array<Word>> = []
  let run: Array<Word> = []
  for (const w of words) {
    const prev = run[run.length - 1]
    if (!w.capitalized) {
      if (run.length > 0) runs.push(run)
      run = []
      continue
    }
    if (prev !== undefined) {
      // The gap read by character codes: a slice per word was most of this loop's cost.
      const space = w.start === prev.end + 1 && text.charCodeAt(prev.end) === 32
      const dotSpace = w.start === prev.end + 2 && text.charCodeAt(prev.end) === 46 && text.charCodeAt(prev.end + 1) === 32
      const joined = space || (dotSpace && (prev.end - prev.start === 1 || loadLexicon().honorifics.has(prev.lower)))
      if (!joined) {
        runs.push(run)
        run = []
      }
    }
    run.push(w)
  }
  if (run.length > 0) runs.push(run)
  return runs
}

/** Leading words of a run that are ordinary vocabulary at a sentence start ("Yesterday", "Contact"). */
const isOrdinary = (word: Word): boolean => {
  const { tags, honorifics } = loadLexicon()
  if (honorifics.has(word.lower)) return false
  const tag = tags.get(word.lower)
  if (tag === undefined) return word.lower === "the" || word.lower === "a"
  return !GIVEN_NAME.has(tag) && tag !== "LastName" && tag !== "Person" && tag !== "Organization" && tag !== "ProperNoun"
}

const classifyRun = (text: string, run: ReadonlyArray<Word>, hits: Array<NerHit>): void => {
  const { tags, honorifics, orgWords } = loadLexicon()
  const last = run[run.length - 1]
  // Organizations: a run ending in a legal suffix or an organization word, or a known organization.
  if (run.length >= 2 && (LEGAL_SUFFIX.has(last.lower) || orgWords.has(last.lower))) {
    let from = 0
    while (from < run.length - 2 && isOrdinary(run[from])) from++
    hits.push({ start: run[from].start, end: last.end, entity_type: "ner_organization" })
    return
  }
  for (let i = 0; i < run.length; i++) {
    const w = run[i]
    const tag = tags.get(w.lower)
    // After a title the rest of the run is the name ("Dr. Maria Garcia").
    if (honorifics.has(w.lower) && i + 1 < run.length) {
      hits.push({ start: run[i + 1].start, end: run[Math.min(run.length, i + 4) - 1].end, entity_type: "ner_person" })
      return
    }
    if (tag === "Organization") {
      hits.push({ start: w.start, end: w.end, entity_type: "ner_organization" })
      continue
    }
    const given = tag !== undefined && GIVEN_NAME.has(tag)
    const surnameNext = i + 1 < run.length && tags.get(run[i + 1].lower) === "LastName"
    const unknownWithSurname = tag === undefined && surnameNext
    if (given || tag === "Person" || unknownWithSurname) {
      // A given name that is also an everyday word ("Mark", "Grace") needs a second name word.
      if (tag === "FirstName" && i + 1 >= run.length) continue
      hits.push({ start: w.start, end: run[Math.min(run.length, i + 3) - 1].end, entity_type: "ner_person" })
      return
    }
  }
  // Context: "Patient: Jane Okafor", "Dear Mx Tan".
  const before = text.slice(Math.max(0, run[0].start - 24), run[0].start)
  if (PERSON_CONTEXT.test(before)) {
    let from = 0
    while (from < run.length - 1 && isOrdinary(run[from])) from++
    // Names are written "Jane", not "ACCT" or "X".
    if (!/^\p{Lu}\p{Ll}/u.test(text.slice(run[from].start, run[from].end))) return
    hits.push({ start: run[from].start, end: run[Math.min(run.length, from + 3) - 1].end, entity_type: "ner_person" })
  }
}

/** A word of compromise's lexicon that is not a name, place or organization ("Foundation", "Station", "Payable"). */
export const isEverydayWord = (lower: string): boolean => {
  const { tags, orgWords } = loadLexicon()
  if (orgWords.has(lower)) return true
  const tag = tags.get(lower)
  return tag !== undefined && !GIVEN_NAME.has(tag) && tag !== "LastName" && tag !== "Person" && tag !== "Honorific" && tag !== "ProperNoun"
}

let memo: { text: string; hits: Array<NerHit> } | undefined

/** Drops the remembered text: the engine calls it after each scan, so no content outlives a request. */
export const forgetNamedEntities = (): void => {
  memo = undefined
}

/** Person and organization hits of `text`, computed once per text for both detectors. */
export const namedEntities = (text: string): Array<NerHit> => {
  if (memo !== undefined && memo.text === text) return memo.hits
  const words = wordsOf(text)
  const runHits: Array<NerHit> = []
  for (const run of capitalizedRuns(text, words)) {
    if (run.length > 8) continue // headings and shouting, not names
    classifyRun(text, run, runHits)
  }
  // Organizations from the lexicon; person names from the gazetteer with context (names.ts).
  const hits = runHits.filter((h) => h.entity_type === "ner_organization")
  for (const span of findPersonNames(text, words, isEverydayWord)) hits.push({ ...span, entity_type: "ner_person" })
  memo = { text, hits }
  return hits
}

const nerDetector = (entity_type: NerHit["entity_type"], severity: "warning" | "info", description: string): Detector => ({
  entity_type,
  library: "pii_ner",
  severity,
  description,
  run: (text: string, emit: Emit) => {
    let n = 0
    for (const hit of namedEntities(text)) {
      if (hit.entity_type !== entity_type) continue
      if (!emit(hit.start, hit.end) || ++n >= MAX_HITS_PER_DETECTOR) return
    }
  }
})

const MONTH = "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
const TIME = "(?:,? (?:at )?\\d{1,2}:\\d{2}(?::\\d{2})?(?: ?[AaPp]\\.?[Mm]\\.?)?)?"

/** Numeric dates need a plausible day and month (so a sort code such as 20-00-00 is not one). */
const plausibleDate = (match: string): boolean => {
  const numeric = /^(\d{1,2})[/.-](\d{1,2})[/.-]/.exec(match)
  if (numeric === null) return true
  const [a, b] = [Number(numeric[1]), Number(numeric[2])]
  if (a === 0 || b === 0 || a > 31 || b > 31) return false
  return a <= 12 || b <= 12
}

export const NER_DETECTORS: ReadonlyArray<Detector> = [
  nerDetector("ner_person", "warning", "Person name"),
  nerDetector("ner_organization", "info", "Organization name"),
  regexDetector({
    entity_type: "ner_date_time",
    library: "pii_ner",
    severity: "info",
    description: "Date or date and time",
    pattern: new RegExp(
      [
        `\\b\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?\\b`,
        `(?<![\\d./-])\\d{1,2}([/.-])\\d{1,2}\\1(?:\\d{4}|\\d{2})(?![\\d]|[./-]\\d)${TIME}`,
        `\\b${MONTH}\\.? \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}\\b${TIME}`,
        `\\b\\d{1,2}(?:st|nd|rd|th)? (?:of )?${MONTH}\\.?,? \\d{4}\\b${TIME}`,
        `\\b${MONTH} \\d{4}\\b`
      ].join("|"),
      "g"
    ),
    validate: plausibleDate
  })
]
