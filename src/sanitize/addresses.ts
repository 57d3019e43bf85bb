/**
 * Street addresses (issue 31): a small grammar of house number, street name and street-type word,
 * in the orders people write them — US/UK "221B Baker Street", French "12 rue de la Paix",
 * German/Dutch "Hauptstraße 5", Italian/Spanish/Polish "Via Roma 12" — plus PO boxes, the
 * flat/suite number and a following city with its ZIP or postcode. A known street-type word and
 * a number in the right place are both required, which keeps "5 Main points" or "Route 66" out.
 * Every quantifier is bounded and alternatives start differently, so scanning stays linear.
 */
import type { Detector } from "./detector.js"
import { MAX_HITS_PER_DETECTOR } from "./detector.js"

/** A capitalised word of a street or city name: "Baker", "Queen's", "Champs-Élysées". */
const NAME = "\\p{Lu}[\\p{L}'’-]{1,24}"
const CITY = "\\p{Lu}\\p{Ll}{1,20}(?: \\p{Lu}\\p{Ll}{1,20}){0,2}"
/** Not glued to a word, number, decimal point or range before it. */
const NOT_AFTER = "(?<![\\p{L}\\d.,:/-])"
const NOT_BEFORE = "(?![\\p{L}\\d]|[.,]\\d)"

const EN_TYPE =
  "(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Terrace|Ter|Way|Square|Sq|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Gardens|Circle|Cir|Loop|Trail|Mews|Row|Alley|Plaza)"
const DIRECTION = "(?: (?:NW|NE|SW|SE|N|S|E|W)(?![\\p{L}\\d]))?"
const UNIT = "(?:,? (?:(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl|Room|Rm)\\.? ?#?|#)[A-Z0-9][A-Za-z0-9-]{0,5}(?![\\p{L}\\d]))?"
const UK_POSTCODE = "[A-Z]{1,2}\\d[A-Z\\d]? \\d[A-Z]{2}"
const US_STATE_ZIP = `(?:,? [A-Z]{2}(?![\\p{L}\\d]))?(?:,? (?:\\d{5}(?:-\\d{4})?|${UK_POSTCODE})(?![\\p{L}\\d]))?`
const TRAILING_CITY = `(?:, ${CITY}${US_STATE_ZIP})?`

/** "221B Baker Street", "12-14 W 3rd St Apt 4B, New York, NY 10012", "Flat 3, 47 Queen's Road". */
const ENGLISH = new RegExp(
  `${NOT_AFTER}\\d{1,6}[A-Za-z]?(?:-\\d{1,6}[A-Za-z]?)? (?:[NSEW]\\.? )?` +
    `(?:(?:${NAME}|\\d{1,3}(?:st|nd|rd|th)) ){1,3}${EN_TYPE}\\.?(?![\\p{L}\\d-])${DIRECTION}${UNIT}${TRAILING_CITY}`,
  "gu"
)

/** "P.O. Box 1234, Austin, TX 78701", "PO Box 77". */
const PO_BOX = new RegExp(`\\b(?:P\\. ?O\\.|PO|Post Office) Box \\d{1,10}(?!\\d)${TRAILING_CITY}`, "gu")

/** The house number after the street name, a Spanish floor ("3º") and a postcode with its city. */
const EU_NUMBER = "\\d{1,4}[a-z]?(?:[-/]\\d{1,4}[a-z]?)?"
const EU_FLOOR = "(?:,? \\d{1,2}[º°ª](?: ?(?:izq|dcha|[A-D])(?![\\p{L}\\d]))?)?"
const EU_POSTCODE_CITY = "(?:,? (?:\\d{5}|\\d{4}(?: [A-Z]{2})?|\\d{2}-\\d{3}) \\p{Lu}\\p{L}{1,24}(?: \\p{Lu}\\p{L}{1,24})?)?"
const EU_TAIL = ` ${EU_NUMBER}${NOT_BEFORE}${EU_FLOOR}${EU_POSTCODE_CITY}`

/** "Hauptstraße 5", "Kurfürstendamm 21", "Bahnhofstr. 44", "Leidsestraat 45", "Schönbrunner Allee 8". */
const GERMANIC = new RegExp(
  "(?<![\\p{L}])(?:\\p{Lu}\\p{Ll}{1,30}(?:straße|strasse|str\\.|weg|platz|gasse|allee|damm|ufer|straat|laan|plein|gracht|steeg|vej|gatan|vägen)" +
    "|(?:\\p{Lu}\\p{Ll}{1,20}[ -]){1,2}(?:Straße|Strasse|Str\\.|Weg|Platz|Gasse|Allee|Damm|Ufer|Ring))" +
    EU_TAIL,
  "gu"
)

/** Lower-case joining words inside Romance street names: "Paseo de la Castellana". */
const JOINER = "(?:de|del|la|las|los|di|della|delle|dei|da|do|dos|das|du|des|le)"

/** "Via Roma 12", "Calle Mayor 7, 3º", "Avenida de Mayo 1370", "ul. Marszałkowska 10". */
const TYPE_FIRST = new RegExp(
  "\\b(?:Via|Viale|Piazza|Piazzale|Corso|Largo|Calle|Avenida|Paseo|Carrer|Rua|Travessa|ul\\.|ulica|al\\.)" +
    ` (?:(?:${JOINER}|${NAME}) ){0,3}${NAME}${EU_TAIL}`,
  "gu"
)

/** "12 rue de la Paix, 75002 Paris", "8 avenue des Champs-Élysées", "3 Rue Cler". */
const FRENCH = new RegExp(
  `${NOT_AFTER}\\d{1,4}(?: ?(?:bis|ter))?,? (?:rue|Rue|avenue|boulevard|bd|chemin|place|allée|impasse|quai|cours) ` +
    `(?:(?:de|du|des|la|le) |[dl]['’]){0,3}${NAME}(?: ${NAME}){0,2}${EU_POSTCODE_CITY}`,
  "gu"
)

const PATTERNS: ReadonlyArray<RegExp> = [ENGLISH, PO_BOX, GERMANIC, TYPE_FIRST, FRENCH]

/** "Flat 3, " written before the house number joins the address (checked here: a leading optional group slows the scan). */
const UNIT_BEFORE = /(?:Flat|Apt|Apartment|Unit|Suite) [A-Z0-9]{1,5},? $/
const withUnitBefore = (text: string, start: number): number => {
  const before = text.slice(Math.max(0, start - 20), start)
  const unit = UNIT_BEFORE.exec(before)
  return unit === null ? start : start - before.length + unit.index
}

/** A trailing "." after a street-type abbreviation ends the sentence, not the address. */
const withoutFinalDot = (text: string, start: number, end: number): number => (end > start && text[end - 1] === "." ? end - 1 : end)

const findAddresses = (text: string): Array<readonly [number, number]> => {
  const hits: Array<readonly [number, number]> = []
  if (!/\d/.test(text)) return hits
  for (const source of PATTERNS) {
    // A private copy: the shared RegExp's lastIndex must not leak between concurrent callers.
    const pattern = new RegExp(source.source, source.flags)
    const unitMayPrecede = source === ENGLISH
    let match: RegExpExecArray | null
    while ((match = pattern.exec(text)) !== null && hits.length < MAX_HITS_PER_DETECTOR) {
      const start = unitMayPrecede ? withUnitBefore(text, match.index) : match.index
      hits.push([start, withoutFinalDot(text, start, match.index + match[0].length)])
    }
  }
  // Patterns may overlap on one address: keep the earliest, then longest, and drop what it covers.
  hits.sort((a, b) => a[0] - b[0] || b[1] - a[1])
  const kept: Array<readonly [number, number]> = []
  for (const hit of hits) {
    const last = kept[kept.length - 1]
    if (last === undefined || hit[0] >= last[1]) kept.push(hit)
  }
  return kept
}

export const ADDRESS_DETECTOR: Detector = {
  entity_type: "street_address",
  library: "pii",
  severity: "warning",
  description: "Street address",
  run: (text, emit) => {
    for (const [start, end] of findAddresses(text)) if (!emit(start, end)) return
  }
}
