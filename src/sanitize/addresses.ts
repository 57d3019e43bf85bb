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
  "(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Terrace|Ter|Way|Square|Sq|Parkway|Pkwy|Highway|Hwy|Close|Crescent|Gardens|Circle|Cir|Loop|Trail|Mews|Row|Alley|Plaza|Grove|Rise|Hill|Green|View|Vale|Wynd|Gate|Parade|Pde|Esplanade|Embankment|Quay|Wharf|Hollow|Heights|Approach|Broadway|Causeway|Ridge)"
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
const EU_NUMBER = "\\d{1,4}[A-Za-z]?(?:[-/]\\d{1,4}[A-Za-z]?){0,2}"
const EU_FLOOR = "(?:,? \\d{1,2}[º°ª](?: ?(?:izq|dcha|[A-D])(?![\\p{L}\\d]))?)?"
const EU_POSTCODE_CITY = "(?:,? (?:\\d{5}|\\d{4}(?: [A-Z]{2})?|\\d{2}-\\d{3}) \\p{Lu}\\p{L}{1,24}(?: \\p{Lu}\\p{L}{1,24})?)?"
const EU_TAIL = ` ${EU_NUMBER}${NOT_BEFORE}${EU_FLOOR}${EU_POSTCODE_CITY}`

/** "Hauptstraße 5", "Kurfürstendamm 21", "Bahnhofstr. 44", "Leidsestraat 45", "Schönbrunner Allee 8". */
const GERMANIC = new RegExp(
  "(?<![\\p{L}])(?:\\p{Lu}\\p{Ll}{1,30}(?:straße|strasse|str\\.|weg|platz|gasse|allee|damm|ufer|ring|chaussee|markt|straat|laan|plein|gracht|steeg|kade|singel|vej|gade|gatan|vägen|gata|veien|vei|gate|ská|ká|ova|ovo|utca|út)" +
    "|(?:\\p{Lu}\\p{Ll}{1,20}[ -]){1,2}(?:Straße|Strasse|Str\\.|Weg|Platz|Gasse|Allee|Damm|Ufer|Ring|Gürtel|gate|gata)" +
    // "Am Mühlbach 7", "Am Neuen Garten 9", "Auf der Heide 3", "An der Alster 1".
    "|(?:Am|Im|An der|Auf der|Auf dem|In der|Zum|Zur) (?:\\p{Lu}\\p{Ll}{1,20} ){0,2}\\p{Lu}\\p{Ll}{1,24})" +
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

/**
 * "Flat 3, ", "Flat 4, Block C, ", "Room 1804, Block B, " written before the house number join the address
 * (checked here: a leading optional group slows the scan).
 */
const UNIT_BEFORE = /(?:(?:Flat|Apt|Apartment|Appartement|Unit|Suite|Room|Rm|Block|Tower|Floor|Building|Bldg)\.? [A-Z0-9]{1,5},? ){1,3}$/
const withUnitBefore = (text: string, start: number): number => {
  const before = text.slice(Math.max(0, start - 60), start)
  const unit = UNIT_BEFORE.exec(before)
  return unit === null ? start : start - before.length + unit.index
}

/** One more part of the address after a comma or line break: a locality, district, postcode or state. */
const NEXT_PART = /^(?:,[ \t]{0,2}|[ \t]{0,2}\n[ \t]{0,4}| )([^,\n]{1,40})/
/** Every word of such a part: capitalised, a postcode or number piece, or a small joining word. */
const LOCALITY_WORD =
  /^(?:\p{Lu}[\p{L}'’.-]*(?:\/\p{Lu}{2})?|[A-Z]{1,3}[0-9][A-Z0-9]{0,3}|[0-9]{1,6}(?:-[0-9]{3,5})?|[0-9]{1,2}\.|Co\.|C\.P\.|CEP|am|an|de|del|la|sur|upon|on|the|bus|piso|apto\.?|int\.?|col\.)$/u

/**
 * The address goes on through up to four comma- or line-separated parts that read as a locality
 * ("Dublin 2, D02 X285", "Co. Cork, P17 KD43", "Apt 12C\nAustin, TX 78745", "2. OG\n50968 Köln"), never
 * through prose or a phone number (a part with more than eight digits).
 */
const withLocality = (text: string, end: number): number => {
  let at = end
  for (let parts = 0; parts < 4; parts++) {
    const next = NEXT_PART.exec(text.slice(at, at + 48))
    if (next === null) break
    // The part's locality words, up to the first that is not one ("D02 X285 please" gives "D02 X285");
    // sentence punctuation after a word ends the address there.
    const words = next[1]!.trimEnd().split(/[ \t]+/)
    let taken = 0
    let length = 0
    for (const [index, raw] of words.entries()) {
      // Sentence punctuation ends the address after a part's last word ("…, P17 KD43."), not after "Co." inside it.
      const word = index === words.length - 1 ? raw.replace(/[.;:!?)]+$/, "") : raw
      if (taken >= 6 || !LOCALITY_WORD.test(word)) break
      length += (taken > 0 ? 1 : 0) + word.length
      taken++
    }
    const part = next[1]!.slice(0, length)
    const digits = part.match(/[0-9]/g)?.length ?? 0
    // Without a postcode or number a locality is one or two words, and the whole part ("Termin am Montag" is not one).
    if (taken === 0 || digits > 8 || (digits === 0 && (taken > 2 || taken < words.length))) break
    at += next[0].length - next[1]!.length + length
    if (taken < words.length) break
  }
  return at
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
      hits.push([start, withLocality(text, withoutFinalDot(text, start, match.index + match[0].length))])
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
