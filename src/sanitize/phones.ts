/**
 * Phone numbers: a cheap pattern finds runs of digits written like a phone number, local rules drop
 * what is plainly something else (dates, versions, IP addresses, amounts, order numbers), and
 * libphonenumber-js decides whether the rest is a number of some region: international forms
 * (`+44 …`, `0049 …`) for every region, national forms for the regions listed below. Extensions
 * (`x123`, `ext. 45`) join the number's span; North American vanity numbers (`1-800-FLOWERS`) have a
 * rule of their own.
 */
import { createRequire } from "node:module"
import type { PhoneNumber } from "libphonenumber-js"
import { type Detector, type Emit, MAX_HITS_PER_DETECTOR, type RegexRule, regexDetector } from "./detector.js"

type Library = typeof import("libphonenumber-js/max")

/**
 * Loaded by the first text that holds a phone-like run (about 50 ms, once), not at start: its
 * metadata of every region is large. The `max` build, because only its full patterns tell a real
 * number from a possible one.
 */
let library: Library | undefined
const phoneLibrary = (): Library => {
  library ??= createRequire(import.meta.url)("libphonenumber-js/max") as Library
  return library
}

/** Regions whose national forms (no `+`) are accepted, most common in our traffic first. */
const NATIONAL_REGIONS = ["US", "GB", "FR", "DE", "AU", "IE", "NL", "IT", "ES", "IN", "NZ", "CA"] as const
/** Regions tried only when a phone word is right before the number (each try costs a parse). */
const CONTEXT_REGIONS = ["PT", "PL", "NO", "SE", "DK", "FI", "AT", "CH", "BE", "MX", "BR", "AR", "CO", "ZA", "NG", "KE", "GH", "PH", "JP", "KR", "CN", "SG", "AE"] as const

/** Words that make a bare number a phone number when they come shortly before it. */
const PHONE_WORD =
  /\b(?:phone|ph|tel|tél|telephone|téléphone|teléfono|telefon|telefono|telefone|tlf|mobile|mobil|mob|móvil|movil|cell|cellphone|celular|cel|cellulare|portable|kom|komórka|fijo|handy|fax|call|calls|called|caller|llame|llama|llamar|llámame|ring|rung|text|sms|whatsapp|dial|contact|reach|reached|number|numero|número|nummer|numéro|hotline|helpline|landline|switchboard|direct|home|work|office|desk|line)\b[^\n]{0,24}$/i

/** Words that make a number something else (an order, an account, a code) when they come right before it. */
const OTHER_WORD =
  /\b(?:order|invoice|inv|ticket|case|ref|reference|tracking|account|acct|sku|serial|iban|ssn|zip|postcode|postal|isbn|id|version|build|amount|total|balance|run|batch|lot|pid|port|offset|block|population|npi|nhs|mrn|dea|licen[cs]e|passport|policy|member|routing|swift|vat|tax|ein|tin)\b[^\n\d]{0,12}$/i

const DATE = /^(?:\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2}(?:\d{2})?)$/
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/
/** North American layout: optional 1, area code, 3-4 digits with separators (the 555 fiction range included). */
const NANP = /^(?:\+?1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}$/
const EXTENSION = /^,? {0,2}(?:x|ext\.?|extn\.?|extension|ext:)[ .:]{0,2}(\d{1,6})(?!\d)/i

const digitsOf = (text: string): string => text.replace(/\D/g, "")
/**
 * UK numbers no person holds: 03 (organisations' UK-wide lines), 0800/0808/0500 freephone, 084x/087x
 * service numbers. (Ofcom's ranges kept for fiction, 020 7946 0xxx and 07700 900xxx, stay: writers use them
 * as anyone's number.) US toll-free numbers stay: their
 * vanity forms are asked for, and a business given as a contact is a contact.
 */
const UK_SERVICE = /^(?:(?:\+|00)44[ .-]?(?:\(0\)[ .-]?)?|0)(?:3\d\d|80[08]|500|84[2-5]|87[0-3])/
/** A UPC/EAN as printed under a barcode: 1, 5, 5, 1 digits. */
const PRINTED_BARCODE = /^\d \d{5} \d{5} \d$/
const SINGLE_DIGIT_GROUPS = /(?:^|[ ().-])\d[ .-]\d[ .-]\d[ .-]\d(?:[ ().-]|$)/

/**
 * Parses left in the current scan. A parse costs 10-25 µs; a hostile text of digit groups could ask
 * for hundreds of thousands, so past this budget only the layouts checked without the library
 * (North American, international without a region check) are reported.
 */
const PARSES_PER_SCAN = 1_500
let parsesLeft = PARSES_PER_SCAN
/** Verdicts of this scan: a thread repeats its signatures. */
const verdicts = new Map<string, boolean>()

/** A number of some region per libphonenumber-js; international forms need only be possible (fictional ranges). */
const regionNumber = (candidate: string, contextual: boolean): boolean => {
  const key = contextual ? `\u0000${candidate}` : candidate
  const known = verdicts.get(key)
  if (known !== undefined) return known
  const verdict = parseVerdict(candidate, contextual)
  verdicts.set(key, verdict)
  return verdict
}

const parseVerdict = (candidate: string, contextual: boolean): boolean => {
  if (parsesLeft <= 0) return false
  const lib = phoneLibrary()
  const international = candidate.startsWith("+") || candidate.startsWith("00")
  if (international) {
    parsesLeft--
    const parsed: PhoneNumber | undefined = lib.parsePhoneNumberFromString(candidate.startsWith("00") ? `+${candidate.slice(2)}` : candidate)
    return parsed?.isPossible() === true
  }
  for (const region of contextual ? [...NATIONAL_REGIONS, ...CONTEXT_REGIONS] : NATIONAL_REGIONS) {
    if (--parsesLeft < 0) return false
    const parsed = lib.parsePhoneNumberFromString(candidate, region)
    if (parsed === undefined) continue
    if (parsed.isValid()) return true
    // UK drama-range numbers (07700 900xxx, 020 7946 0xxx) are possible but not assigned.
    if (contextual && region === "GB" && parsed.isPossible() && candidate.startsWith("0")) return true
  }
  return false
}

/** Whether a digit run, as written, is a phone number rather than a date, version, address or amount. */
const phoneShaped = (candidate: string, before: string): boolean => {
  const digits = digitsOf(candidate)
  if (digits.length < 7 || digits.length > 15 || new Set(digits).size <= 2) return false
  if (UK_SERVICE.test(candidate) || PRINTED_BARCODE.test(candidate)) return false
  if (DATE.test(candidate) || IPV4.test(candidate)) return false
  // Versions and decimals: a dotted group of one digit.
  if (/(?:^|\.)\d(?:\.|$)/.test(candidate)) return false
  if (/[$€£¥]\s?$/.test(before) || /[A-Z]{2}\d{2} $/.test(before)) return false
  const international = candidate.startsWith("+") || candidate.startsWith("00")
  // Right after a code or figure ("AA1 0123 4567", "Sprint 42 2024"): part of that, not a number of its own.
  if (!international && /\d[A-Za-z]*[ -]$/.test(before)) return false
  const phoneWord = PHONE_WORD.test(before)
  if (!phoneWord && OTHER_WORD.test(before)) return false
  const separated = /[ ().-]/.test(candidate)
  // A bare run of digits is a phone number only when the text says so.
  if (!international && !separated && !phoneWord) return false
  if (NANP.test(candidate)) return true
  // A North American local number ("555 0134") when the text says it is a number.
  if (phoneWord && /^\d{3}[ .-]\d{4}$/.test(candidate)) return true
  // National forms outside North America start with a trunk 0; a run without one needs a phone word.
  if (!international && !candidate.startsWith("0") && !phoneWord) return false
  return regionNumber(candidate, phoneWord)
}

/**
 * The longest phone number at the start of `match` (the run may have run into a following figure,
 * "415 555 0100 2 adults"): drops trailing groups until one is accepted; 0 when none is.
 */
const phoneLength = (match: string, text: string, start: number): number => {
  // Four one-digit groups in a row is no way of writing a phone number (and a text of digit groups
  // would otherwise hand over a candidate every dozen characters): rejected before any other check.
  if (SINGLE_DIGIT_GROUPS.test(match) || PRINTED_BARCODE.test(match)) return 0
  let candidate = match
  let offset = 0
  // A parenthesis that opens the run but never closes belongs to the prose: "(call 415-555-0100)".
  if (candidate.startsWith("(") && !candidate.includes(")")) {
    candidate = candidate.slice(1)
    offset = 1
  }
  const before = text.slice(Math.max(0, start - 40), start)
  const after = text.slice(start + match.length, start + match.length + 2)
  if (/^(?:[A-Za-z0-9_%$€£@/]|[.,:-]\d|-[A-Za-z])/.test(after) && !EXTENSION.test(text.slice(start + match.length))) {
    return 0
  }
  for (let trims = 0; trims <= 3; trims++) {
    if (phoneShaped(candidate, before)) return offset === 0 ? candidate.length : 0
    const cut = Math.max(candidate.lastIndexOf(" "), candidate.lastIndexOf("-"), candidate.lastIndexOf("."))
    if (cut <= 0) return 0
    candidate = candidate.slice(0, cut).replace(/[ (.-]+$/, "")
  }
  return 0
}

/** An extension written after the number joins its span. */
const withExtension = (text: string, _start: number, end: number): number => {
  const ext = EXTENSION.exec(text.slice(end, end + 24))
  return ext === null ? end : end + ext[0].length
}

/** Toll-free vanity numbers: letters stand for keypad digits, seven of them after the area code. */
const vanityLength = (match: string): number => {
  const tail = match.replace(/^\+?1?[ .-]?\(?8\d\d\)?[ .-]?/, "")
  const symbols = tail.replace(/[^A-Za-z0-9]/g, "")
  return symbols.length >= 7 && symbols.length <= 8 && /[A-Z]{2}/.test(symbols) ? match.length : 0
}

const PHONE_RULES: ReadonlyArray<RegexRule> = [
  {
    entity_type: "phone_number",
    library: "pii",
    severity: "warning",
    description: "Telephone number",
    // Starts only where a figure begins (not inside a word, code, path or decimal); every quantifier bounded.
    pattern: /(?<![\w+#/.@-])(?<![\d.]:|\d,)(?:\+|(?<![\d)])\(?)?\d[\d ().-]{4,22}\d/g,
    validate: phoneLength,
    extend: withExtension
  },
  {
    entity_type: "phone_number",
    library: "pii",
    severity: "warning",
    description: "Telephone number",
    pattern: /(?<![\w+-])(?:\+?1[ .-]?)?\(?8(?:00|33|44|55|66|77|88)\)?[ .-]?[A-Z0-9]{2,7}(?:-[A-Z0-9]{1,7}){0,2}(?![\w-])/g,
    validate: vanityLength
  },
  {
    entity_type: "phone_number",
    library: "pii",
    severity: "warning",
    description: "Telephone number",
    // Written inside brackets ("called (212.555.0122)"): the first rule skips a run that opens with one.
    hint: "(",
    pattern: /(?<=\()\+?\d[\d ./-]{4,22}\d(?=\))/g,
    validate: phoneLength,
    extend: withExtension
  }
]

/** Digits as words, English and Spanish ("oh one two one", "double oh", "seis uno cinco"). */
const DIGIT_WORDS: Readonly<Record<string, string>> = {
  zero: "0", oh: "0", o: "0", nought: "0", one: "1", two: "2", three: "3", four: "4", five: "5", six: "6", seven: "7", eight: "8", nine: "9",
  cero: "0", uno: "1", dos: "2", tres: "3", cuatro: "4", cinco: "5", seis: "6", siete: "7", ocho: "8", nueve: "9"
}
const SPOKEN_RUN =
  /\b(?:(?:double|triple)[ -])?(?:zero|oh|o|nought|one|two|three|four|five|six|seven|eight|nine|cero|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve)(?:(?:[ ,-]{1,3}|,? and )(?:(?:double|triple)[ -])?(?:zero|oh|o|nought|one|two|three|four|five|six|seven|eight|nine|cero|uno|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|hundred)){5,20}\b/gi

/** How many digits a spoken run stands for ("double oh" two, "nine hundred" three). */
const spokenDigits = (run: string): number => {
  let count = 0
  const words = run.toLowerCase().split(/[^a-z]+/).filter((w) => w.length > 0 && w !== "and")
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!
    if (w === "double" || w === "triple") {
      count += w === "double" ? 2 : 3
      i++
    } else if (w === "hundred") count += 2
    else if (DIGIT_WORDS[w] !== undefined) count++
  }
  return count
}

/**
 * Numbers read out or typed digit by digit ("four one two, five five five…", "0 8 7 - 2 2 1 - 4 4 0 9"):
 * only after a phone word, and seven digits or more.
 */
const spelledNumbers = (text: string, emit: Emit): void => {
  let hits = 0
  const scan = (pattern: RegExp, digits: (run: string) => number) => {
    for (const m of text.matchAll(pattern)) {
      const before = text.slice(Math.max(0, m.index - 60), m.index)
      const n = digits(m[0])
      if (n < 7 || n > 15 || !SPELLED_CONTEXT.test(before)) continue
      if (!emit(m.index, m.index + m[0].length) || ++hits >= MAX_HITS_PER_DETECTOR) return
    }
  }
  if (/\d[ -]{1,3}\d[ -]{1,3}\d/.test(text)) scan(/(?<![\d-])\d(?:[ -]{1,3}\d){6,14}(?![\d-])/g, (run) => digitsOf(run).length)
  if (/\b(?:oh|zero|one|two|three|four|five|six|seven|eight|nine|uno|dos|tres|cinco|seis)\b/i.test(text)) scan(SPOKEN_RUN, spokenDigits)
}
const SPELLED_CONTEXT = new RegExp(PHONE_WORD.source.replace("[^\\n]{0,24}$", "[^\\n]{0,48}$"), "i")

/** The phone detectors of the `pii` library; each scan starts with a fresh parse budget. */
const SPELLED_DETECTOR: Detector = {
  entity_type: "phone_number",
  library: "pii",
  severity: "warning",
  description: "Telephone number read out or typed digit by digit",
  run: spelledNumbers
}

export const PHONE_DETECTORS: ReadonlyArray<Detector> = [...PHONE_RULES.map(regexDetector), SPELLED_DETECTOR].map((detector) => ({
  ...detector,
  run: (text, emit) => {
    parsesLeft = PARSES_PER_SCAN
    verdicts.clear()
    try {
      detector.run(text, emit)
    } finally {
      verdicts.clear()
    }
  }
}))
