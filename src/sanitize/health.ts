/**
 * Person-health detectors (issue 31): ICD-10-CM codes checked against the official list, diagnoses from a
 * vocabulary, medications, NPI and MRN in context. A term or code counts only when the text says it is about
 * someone: a label, a clinical signal or a person near it. The same detectors run in the `pii` library (default,
 * pci, legal packs) and in `healthcare` (hipaa), built once per library; medications are hipaa-only.
 */
import type { Detector, Emit } from "./detector.js"
import { MAX_HITS_PER_DETECTOR } from "./detector.js"
import {
  conditionLexicon,
  icd10Valid,
  inTable,
  isWordStart,
  keyTable,
  type Lexicon,
  matchTerm,
  mayStart,
  medicationLexicon,
  nextWord,
  previousWord,
  wordAt,
  wordEnd
} from "./health-vocabulary.js"
import type { Library } from "./types.js"
import { npiValid } from "./validators.js"

// ---------------------------------------------------------------- context signals

const PERSON = 1
const CLINICAL = 2
const GENERIC = 4
/** "problem" counts as clinical only in "problem list". */
const LIST_HEAD = 8

const SIGNALS: ReadonlyMap<string, number> = (() => {
  const m = new Map<string, number>()
  const put = (kind: number, words: string) => {
    for (const w of words.split(" ")) if (w.length > 0) m.set(w, kind)
  }
  put(
    PERSON,
    "i i'm i've i'd me my mine myself he he's she she's him his her hers himself herself mom mum mother dad father son daughter wife husband brother sister grandma grandmother grandpa grandfather aunt uncle niece nephew cousin child baby kid toddler infant newborn partner spouse boyfriend girlfriend fiance fiancé mr mrs ms miss dear male female man woman gentleman boy girl neighbor neighbour colleague coworker client employee member claimant insured beneficiary resident caller applicant student veteran mi mis mio mia mein meine meiner meinem mon ma mes son sa ses su sus esposo esposa marido mujer hijo hija madre padre abuela abuelo sohn tochter mutter vater mann oma opa fils fille mère père mari femme zoon dochter moeder vader figlio figlia moglie marito nonna nonno mamma papà tiene tengo habe hat heeft ho ha tem"
  )
  put(
    CLINICAL,
    "patient patient's pt pt's diagnosed diagnosis dx ddx hx pmh psh fhx hpi assessment impression presents presented presenting admitted admission admit discharged discharge complains complaint complaining mrn dob icd encounter referral referred prescribed prescription rx refill pharmacy dr md np hospitalized hospitalization inpatient outpatient chart claim authorization preauthorization copay medications meds allergies vitals labs a1c biopsy pathology radiology mri surgery surgical postoperative treated pcp oncologist cardiologist psychiatrist therapist neurologist endocrinologist dermatologist rheumatologist urologist surgeon fmla sick symptoms paciente paziente patiënt patientin diagnosen diagnose diagnóstico diagnostic diagnosi diagnosticado diagnosticada diagnosticar diagnostiqué diagnostiquée diagnostiziert diagnosticato diagnosticata diagnostiek médico médecin arzt ärztin dottore huisarts"
  )
  put(LIST_HEAD, "problem")
  put(GENERIC, "million millions thousand thousands americans people adults worldwide percent population prevalence according study studies research statistics")
  return m
})()

let signalKeys: Uint8Array | null = null

interface Signals {
  /** Positions of signal words, ascending, and their kinds. */
  readonly at: Int32Array
  readonly kind: Uint8Array
  readonly count: number
  /** Three or more clinical signals of at least two words: a clinical document. */
  readonly clinicalDocument: boolean
}

let cachedText: string | null = null
let cachedSignals: Signals | null = null

/** Drops the per-text cache (text.ts calls it after every detect). */
export const forgetHealthScan = (): void => {
  cachedText = null
  cachedSignals = null
}

const signalsOf = (text: string): Signals => {
  if (cachedText === text && cachedSignals !== null) return cachedSignals
  const at: Array<number> = []
  const kind: Array<number> = []
  const clinicalWords = new Set<string>()
  let clinicalCount = 0
  signalKeys ??= keyTable(SIGNALS.keys())
  const keys = signalKeys
  let i = 0
  const n = text.length
  while (i < n) {
    if (!isWordStart(text, i)) {
      i++
      continue
    }
    const end = wordEnd(text, i)
    if (end - i <= 16 && (end - i === 1 || inTable(keys, text, i, end))) {
      // "y/o", "s/p", "h/o", "c/o": clinical shorthand.
      if (end - i === 1 && text.charCodeAt(end) === 47 && /[ohpOHP]/.test(text[end + 1] ?? "") && /[yschYSCH]/.test(text[i]!)) {
        at.push(i)
        kind.push(CLINICAL)
        clinicalCount++
        clinicalWords.add(`${text[i]}/`)
      } else {
        let k = SIGNALS.get(wordAt(text, i, end))
        if (k === LIST_HEAD) k = /^\s{1,2}list\b/i.test(text.slice(end, end + 8)) ? CLINICAL : undefined
        if (k !== undefined) {
          at.push(i)
          kind.push(k)
          if (k === CLINICAL) {
            clinicalCount++
            clinicalWords.add(wordAt(text, i, end))
          }
        }
      }
    }
    i = end + 1
  }
  const signals: Signals = {
    at: Int32Array.from(at),
    kind: Uint8Array.from(kind),
    count: at.length,
    clinicalDocument: clinicalCount >= 3 && clinicalWords.size >= 2
  }
  cachedText = text
  cachedSignals = signals
  return signals
}

/** Kinds of signals in [from, to). */
const kindsIn = (signals: Signals, from: number, to: number): number => {
  let lo = 0
  let hi = signals.count
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (signals.at[mid]! < from) lo = mid + 1
    else hi = mid
  }
  let kinds = 0
  for (let k = lo; k < signals.count && signals.at[k]! < to && k - lo < 64; k++) kinds |= signals.kind[k]!
  return kinds
}

const BEFORE = 160
const AFTER = 100

/** About a person: a clinical document, or a person or clinical signal near the span and no population talk without a person. */
const aboutSomeone = (text: string, start: number, end: number, ambiguous: boolean): boolean => {
  const signals = signalsOf(text)
  const kinds = kindsIn(signals, Math.max(0, start - BEFORE), end + AFTER)
  if (ambiguous) {
    if (signals.clinicalDocument || (kinds & CLINICAL) !== 0) return true
    return personRightBefore(text, start)
  }
  if (signals.clinicalDocument) return true
  if ((kinds & (PERSON | CLINICAL)) === 0) return false
  if ((kinds & GENERIC) !== 0 && (kinds & PERSON) === 0) return false
  return true
}

const RIGHT_BEFORE = /\b(?:my|his|her|mom's|dad's|had|has|have|having|suffered|suffers|survived|diagnosed with)\s+(?:an?\s+|the\s+)?(?:[A-Za-z'-]+\s+)?$/i

/** "had a stroke", "his anxiety", "diagnosed with mild anxiety". */
const personRightBefore = (text: string, start: number): boolean => RIGHT_BEFORE.test(text.slice(Math.max(0, start - 32), start))

// ---------------------------------------------------------------- modifiers

const words = (s: string): ReadonlySet<string> => new Set(s.split(" "))
const PREFIX_MODS = words(
  "left right bilateral l r lt rt acute chronic severe mild moderate recurrent persistent uncontrolled controlled poorly well stable unstable active advanced metastatic benign malignant primary secondary early late end stage onset new worsening progressive intermittent paroxysmal longstanding long-standing refractory resistant complicated uncomplicated idiopathic familial hereditary congenital juvenile childhood postpartum seasonal atypical mixed partial complete total major minor infected open closed displaced nondisplaced comminuted type insulin-dependent insulin dependent non-insulin"
)
const SUFFIX_MODS = words(
  "mellitus disorder disease syndrome exacerbation exacerbations flare flares flare-up relapse unspecified uncontrolled controlled recurrent moderate severe mild chronic acute single episode episodes in remission partial full with without type stage grade class nyha left right bilateral"
)
const WITH_WORDS = words(
  "hyperglycemia hypoglycemia complications complication nephropathy neuropathy retinopathy aura psychotic features feature behavioral disturbance disturbances coma ketoacidosis acute exacerbation reduced preserved ejection fraction mixed anxious distress melancholic peripheral diabetic chronic kidney disease stage hyperosmolarity foot ulcer gangrene circulatory hemorrhage perforation obstruction effusion lesions metastasis metastases"
)
const STAGE_VALUE = /^(?:[0-5][ab]?|i{1,3}[ab]?|iv[ab]?|v)$/i

/** Extends a matched term over the modifiers before and after it; needsSite terms return -1 without a site. */
const extend = (text: string, start: number, end: number, needsSite: boolean, lexicon: Lexicon, sites: ReadonlySet<string>): { start: number; end: number } | null => {
  let hasSite = false
  // Before: modifiers and sites, at most five words.
  for (let k = 0; k < 5; k++) {
    const prev = previousWord(text, start)
    if (prev === null) break
    const w = wordAt(text, prev.start, prev.end)
    if (sites.has(w)) hasSite = true
    else if (!PREFIX_MODS.has(w) && !(STAGE_VALUE.test(w) && k === 0 && /type|stage/i.test(text.slice(Math.max(0, prev.start - 6), prev.start)))) break
    start = prev.start
  }
  // After: "stage 3b", ", recurrent, moderate", "with hyperglycemia", "of the left knee".
  for (let k = 0; k < 8; k++) {
    const next = nextWord(text, end, true)
    if (next === -1) break
    const e = wordEnd(text, next)
    const w = wordAt(text, next, e)
    if (w === "with" || w === "without") {
      let at = e
      let joined = 0
      for (let j = 0; j < 6; j++) {
        const n2 = nextWord(text, at)
        if (n2 === -1) break
        const e2 = wordEnd(text, n2)
        const w2 = wordAt(text, n2, e2)
        if (!WITH_WORDS.has(w2) && !lexicon.words.has(w2) && !sites.has(w2) && !(joined > 0 && (w2 === "and" || w2 === "of"))) break
        at = e2
        joined++
      }
      while (joined > 0 && /\s(?:and|of)$/i.test(text.slice(end, at))) {
        at = text.slice(0, at).replace(/\s+(?:and|of)$/i, "").length
        joined--
      }
      if (joined === 0) break
      end = at
      continue
    }
    if ((w === "of" || w === "in" || w === "to") && text.charCodeAt(end) !== 44) {
      let at = e
      let found = false
      for (let j = 0; j < 5; j++) {
        const n2 = nextWord(text, at)
        if (n2 === -1) break
        const e2 = wordEnd(text, n2)
        const w2 = wordAt(text, n2, e2)
        if (sites.has(w2)) found = true
        else if (!(w2 === "the" || w2 === "left" || w2 === "right" || w2 === "bilateral" || w2 === "both")) break
        at = e2
      }
      if (!found) break
      hasSite = true
      end = at
      continue
    }
    if (SUFFIX_MODS.has(w) || (k === 0 && STAGE_VALUE.test(w) && text.charCodeAt(end) !== 44) || (STAGE_VALUE.test(w) && /(?:stage|grade|class|type)\s*$/i.test(text.slice(end - 6, end)))) {
      if (w === "in" && !/^\s*remission/i.test(text.slice(e, e + 12))) break
      end = e
      continue
    }
    break
  }
  if (needsSite && !hasSite) return null
  return { start, end }
}

// ---------------------------------------------------------------- vocabulary scan

type Kind = "condition" | "medication"

const STRENGTH = /\s{0,2}(?:(?:ER|XR|SR|XL|DR|CR|ODT|IR|HCT|HCl|hydrochloride|sodium|succinate|tartrate|besylate|extended-release)\b\s{0,2})?(?:\d{1,5}(?:[.,]\d{1,3})?\s?(?:mg|mcg|µg|μg|g|gm|ml|mL|units?|IU|iu|%|mEq|meq)\b(?:\s?\/\s?(?:\d{1,4}(?:\.\d{1,2})?\s?)?(?:mg|ml|mL|hr|h|dose|actuation|spray)\b)?(?:\s{0,2}(?:tablets?|tabs?|capsules?|caps?|ER|XR|SR|XL|DR|ODT|inhaler|injection|pen|patch(?:es)?|solution|suspension|cream|ointment|gel|drops|spray|po|PO|IV|IM|SQ|subq|SL)\b)?)?/y
const MED_BEFORE = /\b(?:on|taking|takes|take|took|started|start|starting|continue|continued|stopped|stop|prescribed|increase|increased|decrease|decreased|refill|refilled|using|uses|needs|dose of|rx|Rx)\s+$/

const scan = (kind: Kind, text: string, emit: Emit): void => {
  const { lexicon, sites } = kind === "condition" ? conditionLexicon() : { lexicon: medicationLexicon(), sites: new Set<string>() }
  const n = text.length
  let hits = 0
  let lastAccepted = -1_000
  let i = 0
  while (i < n) {
    if (!isWordStart(text, i)) {
      i++
      continue
    }
    const end = wordEnd(text, i)
    if (end - i > 40 || !mayStart(lexicon, text, i, end)) {
      i = end + 1
      continue
    }
    const match = matchTerm(lexicon, text, i, end)
    if (match === null) {
      i = end + 1
      continue
    }
    let span: { start: number; end: number } | null = { start: i, end: match.end }
    if (kind === "condition") span = extend(text, i, match.end, match.term.needsSite, lexicon, sites)
    else {
      STRENGTH.lastIndex = match.end
      const strength = STRENGTH.exec(text)
      if (strength !== null && strength[0].trim().length > 0) span = { start: i, end: match.end + strength[0].trimEnd().length }
    }
    if (span === null) {
      i = match.end
      continue
    }
    const dosed = kind === "medication" && span.end > match.end && /\d/.test(text.slice(match.end, span.end))
    const ok =
      kind === "medication"
        ? aboutSomeone(text, span.start, span.end, match.term.ambiguous && !dosed) ||
          MED_BEFORE.test(text.slice(Math.max(0, span.start - 16), span.start)) ||
          (dosed && span.start - lastAccepted < 200)
        : aboutSomeone(text, span.start, span.end, match.term.ambiguous)
    if (ok) {
      lastAccepted = span.end
      if (!emit(span.start, span.end) || ++hits >= MAX_HITS_PER_DETECTOR) return
    }
    i = Math.max(span.end, i + 1)
  }
}

// ---------------------------------------------------------------- ICD-10-CM codes

const ICD_CANDIDATE = /(?<![A-Za-z0-9.\-:=$#])([A-TV-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4}|[0-9A-Z]{1,4})?)(?![A-Za-z0-9:]|\.[0-9A-Za-z]|-\d)/g
const ICD_LABEL = /\b(?:ICD(?:-?10)?(?:-?CM)?|dx|diagnos[ie]s|diag|codes?|billing|billed|primary|secondary|principal|admitting|problem list|assessment)\b[^\n]{0,40}$/i
const NOT_A_CODE_BEFORE = /\b(?:flight|gate|seat|row|cell|cells|room|model|route|bus|highway|exit|platform|vitamin|version|size|sheet|column|range|grid|terminal|pier|lot|suite|apt|unit|sku|part|item|no|nr|form|phase|series|galaxy|iphone|pixel|type)\.?\s*$/i

const icdScan = (text: string, emit: Emit): void => {
  const pattern = new RegExp(ICD_CANDIDATE.source, ICD_CANDIDATE.flags)
  const found: Array<{ start: number; end: number; code: string }> = []
  let match: RegExpExecArray | null
  while ((match = pattern.exec(text)) !== null && found.length < MAX_HITS_PER_DETECTOR) {
    if (icd10Valid(match[1]!)) found.push({ start: match.index, end: match.index + match[0].length, code: match[1]! })
  }
  if (found.length === 0) return
  let hits = 0
  for (let k = 0; k < found.length; k++) {
    const f = found[k]!
    const specific = f.code.length > 3
    // A list: a neighbouring valid code with only separators between, one of the two more than a category.
    const near = (o: { start: number; end: number; code: string } | undefined, a: number, b: number) =>
      o !== undefined && b - a <= 8 && /^[\s,;/&|]*(?:and|or)?[\s,;/&|]*$/.test(text.slice(a, b)) && (specific || o.code.length > 3)
    const listed = near(found[k - 1], found[k - 1]?.end ?? 0, f.start) || near(found[k + 1], f.end, found[k + 1]?.start ?? 0)
    const before = text.slice(Math.max(0, f.start - 48), f.start)
    const labelled = !listed && ICD_LABEL.test(before)
    if (!listed && !labelled && NOT_A_CODE_BEFORE.test(before)) continue
    let ok = labelled || listed
    if (!ok) {
      const signals = signalsOf(text)
      const reach = specific ? 300 : 80
      ok = signals.clinicalDocument || (kindsIn(signals, Math.max(0, f.start - reach), f.end + reach) & CLINICAL) !== 0
    }
    if (ok && (!emit(f.start, f.end) || ++hits >= MAX_HITS_PER_DETECTOR)) return
  }
}

// ---------------------------------------------------------------- NPI and MRN

const TEN_DIGITS = /(?<![\d-])(\d{10})(?![\d-])/g
const NPI_CONTEXT = /\b(?:NPI|national provider|provider|prescriber|prescribing|rendering|billing|referring|ordering|attending|physician|pharmacist|taxonomy|practitioner|dr\.?)\b[^\n]{0,60}$/i
const NOT_NPI_BEFORE = /\b(?:phone|tel|telephone|fax|cell|mobile|call|acct|account|routing|ssn|order|invoice|tracking|member|policy|group)\b[^\n]{0,16}$/i

const npiScan = (text: string, emit: Emit): void => {
  const pattern = new RegExp(TEN_DIGITS.source, TEN_DIGITS.flags)
  let hits = 0
  let match: RegExpExecArray | null
  while ((match = pattern.exec(text)) !== null) {
    if (!npiValid(match[1]!)) continue
    const before = text.slice(Math.max(0, match.index - 72), match.index)
    if (!NPI_CONTEXT.test(before)) continue
    if (!/\bNPI\b/i.test(before.slice(-24)) && NOT_NPI_BEFORE.test(before)) continue
    if (!emit(match.index, match.index + 10) || ++hits >= MAX_HITS_PER_DETECTOR) return
  }
}

/** Labels that name a medical record number wherever they stand. */
const MRN_STRONG =
  /\b(?:MRN|MR#|MR\s?(?:No\.?|number|num)|med(?:ical)?\.?\s?rec(?:ord)?\.?(?:\s?(?:#|No\.?|number|num))?|medical record(?:\s(?:number|no\.?|#|id))?|patient\s?(?:id|identifier|number|no\.?|#)|pt\.?\s?(?:id|#|no\.?|number)|hosp(?:ital)?\.?\s?(?:no\.?|#|number|id)|chart\s?(?:number|no\.?|#|id)|unit\s?(?:no\.?|#|number)|record\s?(?:number|no\.?|#))["'\\]{0,3}\s{0,3}[:#=-]?\s{0,3}["'\\]{0,3}(?:is\s)?([A-Z]{0,4}-?\d[A-Z0-9-]{3,15})\b/dgi
/** Labels that name one only in a clinical text (account, encounter, member numbers). */
const MRN_CLINICAL =
  /\b(?:(?:acct\.?|account|encounter|visit|member|subscriber|beneficiary|insured|medicaid|medicare|MBI|health plan|chart)(?:\s?(?:id|#|no\.?|number|num)\s{0,3}[:#=-]?|\s{0,3}[:#=-])|(?:member|insured|subscriber|chart)(?=\s{1,3}[A-Z]{0,4}-?\d{4}))\s{0,3}([A-Z]{0,4}-?\d[A-Z0-9-]{3,15})\b/dgi
/** A record number in brackets right after the patient's name: "Pt: Ahmad bin Yusof (HX595045)". */
const MRN_AFTER_NAME =
  /\b(?:pt|patient|mr|mrs|ms|miss|mx)\.?:?[ \t]{1,3}(?:[\p{L}'’.-]{1,25}[ \t]){1,5}\(([A-Z]{0,4}-?[0-9]{5,12})\)/dgiu

const mrnScan = (text: string, emit: Emit): void => {
  let hits = 0
  for (const [source, clinicalOnly] of [
    [MRN_STRONG, false],
    [MRN_CLINICAL, true],
    [MRN_AFTER_NAME, true]
  ] as const) {
    const pattern = new RegExp(source.source, source.flags)
    let match: RegExpExecArray | null
    while ((match = pattern.exec(text)) !== null) {
      const [start, end] = match.indices![1]!
      const value = match[1]!
      if ((value.match(/\d/g)?.length ?? 0) < 3 && !/\d/.test(value)) continue
      if (clinicalOnly) {
        const signals = signalsOf(text)
        if (!signals.clinicalDocument && (kindsIn(signals, Math.max(0, start - 200), end + 200) & CLINICAL) === 0) continue
      }
      if (!emit(start, end) || ++hits >= MAX_HITS_PER_DETECTOR) return
      if (pattern.lastIndex < end) pattern.lastIndex = end
    }
  }
}

// ---------------------------------------------------------------- detectors

const detector = (entity_type: string, library: Library, severity: Detector["severity"], description: string, run: Detector["run"]): Detector => ({
  entity_type,
  library,
  severity,
  description,
  run
})

/** Diagnoses, ICD-10-CM codes, NPI and MRN for one library (`pii` outside hipaa, `healthcare` in it). */
export const personHealthDetectors = (library: Library): ReadonlyArray<Detector> => [
  detector("mrn_pattern", library, "critical", "Medical record, patient or chart number next to its label", mrnScan),
  detector("icd10_code", library, "warning", "ICD-10-CM diagnosis code (checked against the code list) with a label, a clinical context or in a list of codes", icdScan),
  detector("diagnosis", library, "warning", "Condition or disease from the medical vocabulary, said of a person", (text, emit) => scan("condition", text, emit)),
  detector("npi_number", library, "warning", "US National Provider Identifier (Luhn-valid with prefix 80840) next to NPI or a provider", npiScan)
]

export const MEDICATION_DETECTOR: Detector = detector(
  "medication",
  "healthcare",
  "warning",
  "Medication (generic or brand name, with its strength and form), said of a person",
  (text, emit) => scan("medication", text, emit)
)

const TRIGGER_FILLER = words("with without from disease syndrome disorder type stage high low chronic acute severe mild left right upper lower back")

/** Whether a phrase after a diagnosis trigger names a known condition in its first words. */
export const namesCondition = (phrase: string): boolean => {
  const { lexicon } = conditionLexicon()
  const ws = phrase.toLowerCase().match(/[a-z0-9']+/g) ?? []
  return ws.slice(0, 4).some((w) => w.length > 3 && (lexicon.byFirst.has(w) || lexicon.words.has(w)) && !TRIGGER_FILLER.has(w))
}

/** Used by the trigger-phrase rule: a person or clinical signal near the trigger. */
export const clinicalNear = (text: string, start: number): boolean => {
  const signals = signalsOf(text)
  // The trigger itself ("Diagnosis:") is not evidence: look before it and after the phrase's start.
  const kinds = kindsIn(signals, Math.max(0, start - BEFORE), Math.max(0, start - 16)) | kindsIn(signals, start, start + AFTER)
  return signals.clinicalDocument || (kinds & (PERSON | CLINICAL)) !== 0
}
