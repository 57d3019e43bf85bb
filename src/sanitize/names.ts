/**
 * Person names (issue 31): a gazetteer of given and family names of many languages, each with a weight
 * and with how common it is as an English word (src/sanitize/data/names.txt, see README.md there),
 * read with the context people write names in: titles, salutations and sign-offs, role labels, verbs
 * of people, possessives, particles, initials, name columns and keys. Case-insensitive: a lower-case
 * "maria gonzalez" is found when both parts are names and neither is an everyday word; a name that is
 * also a word ("Will", "Grace", "June") needs context that says person.
 *
 * One pass over the words the NER pass already split; each word costs one map look-up.
 */
import { readFileSync } from "node:fs"

export interface NameWord {
  readonly start: number
  readonly end: number
  readonly lower: string
  readonly capitalized: boolean
}

interface Gazetteer {
  /** name -> G*100 + F*10 + W (see the data file's header). */
  readonly names: ReadonlyMap<string, number>
  readonly places: ReadonlySet<string>
}

let gazetteer: Gazetteer | undefined

const readData = (file: string): string => readFileSync(new URL(`./data/${file}`, import.meta.url), "utf8")

/** Read on first use (about 240,000 names): a process that never sanitizes does not hold them. */
export const loadGazetteer = (): Gazetteer => {
  if (gazetteer !== undefined) return gazetteer
  const names = new Map<string, number>()
  const data = readData("names.txt")
  let previous = ""
  let at = 0
  while (at < data.length) {
    let eol = data.indexOf("\n", at)
    if (eol === -1) eol = data.length
    if (data.charCodeAt(at) !== 35 && eol > at) {
      const tab = data.indexOf("\t", at)
      const nameEnd = tab === -1 || tab > eol ? eol : tab
      const name = previous.slice(0, data.charCodeAt(at) - 48) + data.slice(at + 1, nameEnd)
      // GFW with trailing zeros dropped: "4" is 400, "36" is 360.
      let code = 110
      if (nameEnd < eol) {
        code = 0
        for (let d = 0, c = nameEnd + 1; d < 3; d++, c++) code = code * 10 + (c < eol ? data.charCodeAt(c) - 48 : 0)
      }
      names.set(name, code)
      previous = name
    }
    at = eol + 1
  }
  const places = new Set<string>()
  for (const line of readData("names-decoys.txt").split("\n")) if (line !== "" && line[0] !== "#") places.add(line)
  for (const p of PLACES_AND_THINGS) places.add(p)
  gazetteer = { names, places }
  return gazetteer
}

/**
 * Names that are first of all something else: months, weekdays, seasons, places, drugs, products and
 * brands named like people, and everyday words. Alone they are a name only after a title, salutation
 * or label; in a full name ("June Carter") they still count.
 */
const PLACES_AND_THINGS = new Set(
  `january february march april may june july august september october november december monday tuesday wednesday
  thursday friday saturday sunday spring summer autumn winter christmas easter god jesus lord allah
  will may hope grace bill mark rose jack june summer dawn joy faith amber ruby pearl iris lily daisy holly ivy
  violet hazel olive sunny sky rain storm river brook page chase hunter cash penny buck bob bud guy sue pat dick
  rich frank earl duke king prince major son art gene ray rob sterling wade drew lane dean chance miles august
  victory price bishop baker carpenter mason taylor porter cook hill wood stone lake field brown green white black
  gray grey young long short little love sweet rock sand star sun moon angel mercy patience honor honour
  tesla mercedes chevy lexus alexa siri cortana jeeves wendy denny dell ford chrysler lincoln kia ferrari porsche
  lamborghini toyota honda mazda subaru nissan audi volvo skoda seat opel renault peugeot citroen fiat dodge jeep
  ruger colt smith wesson chanel prada gucci hermes versace dior cartier tiffany mattel barbie harley davidson
  allegra lyrica ambien xanax valium zoloft paxil prozac lexapro celexa wellbutrin cialis viagra levitra
  humira otezla ozempic wegovy trulicity jardiance januvia eliquis xarelto lasix norco percocet vicodin tylenol
  advil aleve motrin claritin zyrtec flonase ventolin advair symbicort singulair lipitor crestor zocor plavix
  coumadin keppra lamictal depakote topamax neurontin seroquel abilify risperdal zyprexa adderall ritalin
  concerta vyvanse strattera synthroid cymbalta effexor pristiq trintellix buspar klonopin ativan restoril
  pandora disney ikea zelle momo santa manila cardiff brooklyn heijn jazz kivik
  amy amazon google apple microsoft oracle adobe cisco intel nvidia ibm meta uber lyft airbnb stripe slack
  jira confluence github gitlab docker kubernetes linux debian ubuntu fedora android ios windows mac
  python java ruby rust julia perl swift scala kotlin dart go elixir erlang haskell lisp ada pascal
  express django flask rails laravel spring react angular vue svelte ember next nuxt remix deno bun node
  america europe africa asia australia canada mexico brazil china japan india israel jordan georgia virginia
  carolina dakota florida texas nevada kansas victoria sydney melbourne paris london berlin madrid rome
  vienna florence sofia lima santiago austin dallas houston phoenix denver boston chicago seattle orlando
  savannah charlotte madison jackson aurora regina helena raleigh columbia memphis nashville
  lambda alpha beta gamma delta sigma omega echo foxtrot hotel india juliet kilo mike oscar papa romeo
  sierra tango uniform victor whiskey yankee zulu ok okay yes no`.split(/\s+/)
)

/** Words that follow a title or salutation without being a name ("Dear Sir", "Hi team"). */
const NOT_A_NAME_AFTER_CONTEXT = new Set(
  `sir madam madame mesdames messieurs team all everyone everybody folks guys there colleague colleagues friend friends
  customer customers client clients member members user users sirs gentlemen ladies hiring manager managers
  doctor dr nurse patient parent parents family valued support admin administrator reviewer reviewers editor
  editors committee board owner owners tenant tenants resident residents neighbor neighbour neighbors
  the a an my our your his her their this that mr mrs ms mx miss again so very too for and or to of in on at with
  from by as is was be been name names first last full given family surname middle date number id no yes`.split(/\s+/)
)

/** Months, weekdays and holidays: a name alone only after a title or salutation. */
const CALENDAR = new Set(
  "january february march april may june july august september october november december monday tuesday wednesday thursday friday saturday sunday christmas easter jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun".split(
    " "
  )
)

/**
 * Words that are never part of a name here: common function words of the languages people write to
 * us in (German, French, Spanish, Italian, Dutch, Portuguese, Polish; short ones that are also Asian
 * family or given names, like "le", "ma", "su", "mei", are left out), form labels, languages and
 * nationalities, the pronoun "I" and its contractions. Many are in the name lists as rare surnames.
 */
const NEVER_NAME = new Set(
  `der die das und oder aber nicht ich wir ihr ein eine einen einem einer mit von zum zur bei nach vor über unter für ohne gegen wie
  was wer warum wann dann denn doch noch schon auch nur sehr mehr ganz gut heute morgen gestern bitte danke nein hier dort wieder immer
  alles alle viel viele ist sind war waren hat haben habe hatte wird werden wurde kann können muss müssen soll sollen wollen sein seine
  ihre ihren unser euer dem den des aus auf als wenn weil dass mal sah tage uhr statt holen senden schicken sache person
  les une des et mais pas nous vous ils elles cette ces mon mes ton tes ses notre votre leur avec sans pour par sur sous dans chez
  entre vers est sont était être avoir avons avez ont fait faire plus moins très bien oui non merci bonjour bonsoir salut rien tout
  tous toute toutes aussi encore déjà jamais toujours ici quand comment pourquoi qui que quoi dont où veuillez paiement
  los las unos unas pero yo él ella nosotros ellos ellas mis tus sus nuestro con sin para por sobre hasta desde son era fue está están
  estaba esta este esto estos estas ese esa eso muy más menos gracias hola buenos buenas días tarde noche qué quien cuando como donde
  porque también todavía siempre nunca aquí allí dar hacer tener veo pago dudas sueldo
  gli uno una non lui lei noi voi loro mio mia tuo tua suo sua senza per tra fra sono essere avere hai abbiamo molto meno bene male
  grazie ciao buongiorno buonasera che chi quando dove perché anche già ancora sempre mai qui
  het een maar niet jij hij zij wij jullie mijn jouw zijn haar ons onze met zonder voor door uit aan naar van bij heeft hebben wordt
  worden kunnen moet moeten zal zullen wil willen goed dank bedankt hallo nee daar wie waar waarom wanneer ook nog altijd nooit dagen
  uma uns umas mas não eu ele ela nós eles elas meu minha teu seu com sem são foi muito mais obrigado obrigada olá bom boa dia noite
  quem onde também ainda aqui ali
  jest są był była było ona oni one mój moja twój twoja jego jej nasz wasz tak nie dziękuję dzień dobry proszę kto gdzie kiedy jak
  dlaczego już jeszcze zawsze nigdy tutaj tam
  thu thur thurs tue tues wed fri doe roe mot passe gmail día durante bonne journée libro re author auth subject cc note ps
  i i'm i've i'd i'll im ive tel fax mob ext ref attn iban bic swift unit ticket operations master mom dad mum
  english german french spanish italian dutch polish portuguese russian chinese japanese korean arabic hindi turkish greek swedish
  norwegian danish finnish czech hungarian romanian ukrainian vietnamese thai indonesian irish scottish welsh british american
  canadian australian mexican brazilian indian nigerian kenyan african european asian`.split(/\s+/)
)

/**
 * Last words that make a chain of capitalized words a business, place or institution, not a person
 * ("Tanaka Precision", "Halden Timber", "Hy-Vee Pharmacy", "Victoria Park").
 */
const NOT_PERSON_HEAD = new Set(
  `pharmacy clinic hospital imaging neurology cardiology oncology dental dentistry smiles surgery medical health healthcare care
  freight logistics timber copper mining precision engineering solutions services systems group holdings partners associates
  consulting capital bank insurance realty properties foods farms farm motors auto electric energy power steel metals plastics
  textiles supplies supply trading imports exports labs laboratories software technologies tech digital media studio studios design
  architects construction builders roofing plumbing electrical transport shipping airlines airways rail travel tours hotel hotels
  resort restaurant cafe café bakery brewery winery market markets store stores shop mart outlet center centre institute institution
  foundation trust society association council university college school academy church chapel cathedral park street road avenue
  lane square station airport bridge valley mountain hills county company corp inc ltd llc gmbh spa plc pty amber haneda yaris
  fund funds capital ventures industries industrial manufacturing packaging paper printing press publishing news radio tv
  lifeboat foundation charity ministry department office agency bureau court tribunal police fire library museum gallery theatre
  theater cinema club league fc united city town village district region ab as oy sa ag bv nv kk co srl sarl sas kg ohg se
  marine joinery bookkeeping conveyancing orthopedics infirmary hall house corner post`.split(/\s+/)
)

/** Titles are context, never part of the name. */
const TITLES = new Set(
  "dr mr mrs ms mx prof sir dame herr frau fräulein sr sra srta mme mlle mme monsieur madame señor señora senor senora dott sig signor signora rev fr sgt capt lt col gen hon dhr mevr".split(" ")
)

/** Speech and action verbs right after a word that make it a person even when it is also a word. */
const SPEECH_AFTER =
  /^(?:'s |’s |,? (?:said|says|told|tells|asked|asks|wrote|writes|emailed|texted|replied|replies|mentioned|explained|confirmed|agreed|thinks|thought|promised|called me|called us|wants|wanted|signed)\b)/iu

/** Every word the context patterns name: a pattern is tried only when the word next to a name is one of these. */
const wordsOf = (...patterns: ReadonlyArray<RegExp>): Set<string> => new Set(patterns.flatMap((p) => p.source.toLowerCase().match(/\p{L}[\p{L}'’]*/gu) ?? []))

/** A word inside an identifier, address or path ("T.O'Neil_99@", "user=app", "/home/kofi"). */
const embedded = (text: string, start: number, end: number): boolean => {
  const p = start > 0 ? text[start - 1] : " "
  const q = end < text.length ? text[end] : " "
  if (p === "@" || p === "_" || p === "/" || p === "\\" || p === "." || (p >= "0" && p <= "9")) return true
  if (q === "@" || q === "_" || q === "/" || q === "\\" || (q >= "0" && q <= "9")) return true
  if (q === "." && end + 1 < text.length && /[\p{L}\d]/u.test(text[end + 1])) return true
  return false
}

/**
 * A transcript's speaker: the same label opens two lines or more ("Pam: …", "Dev: …"), so a given name that is
 * also a word ("Will", "Pam") is a person there.
 */
const speaksTwice = (text: string, start: number, end: number): boolean => {
  const label = text.slice(start, end)
  let count = 0
  for (let at = text.indexOf(`${label}:`); at !== -1 && count < 2; at = text.indexOf(`${label}:`, at + 1)) {
    const lineStart = text.lastIndexOf("\n", at - 1) + 1
    if (SPEAKER_PREFIX.test(text.slice(lineStart, at))) count++
  }
  return count >= 2
}

/** What may stand before a speaker's name on its line: a time stamp, a bracketed date, a bullet. */
const SPEAKER_PREFIX = /^[ \t]*(?:\[[^\]\n]{1,30}\][ \t]*|[0-9]{1,2}[:.][0-9]{2}(?:[:.][0-9]{2})?(?:[ \t]*[ap]m)?[ \t,-]*|[-*•>][ \t]*)?$/i

/** Particles that join the parts of a name ("van der", "de la", "bin", "al"). */
const PARTICLES = new Set(["van", "von", "der", "den", "de", "del", "della", "di", "da", "dos", "das", "do", "du", "la", "le", "bin", "binti", "bint", "ibn", "ben", "al", "el", "ter", "ten", "st", "y", "zu", "af", "av", "mac", "ap", "ní", "nic", "ó", "ua", "giolla"])

/** Titles: the name follows ("Dr. Okafor", "Frau Müller", "Sra. Pérez"). */
const TITLE =
  /(?:^|[^\p{L}])(?:dr|mr|mrs|ms|mx|miss|mister|missus|prof|professor|sir|dame|lady|lord|madam|madame|mme|mlle|monsieur|herr|frau|fräulein|sr|sra|srta|señor|señora|senor|senora|señorita|sig|sig\.ra|signor|signora|dott|dott\.ssa|dottor|doctor|doktor|pan|pani|don|doña|dona|sheikh|shaikh|rev|reverend|fr|father|sister|brother|nurse|judge|justice|officer|detective|sgt|sergeant|capt|captain|lt|col|gen|hon|rabbi|imam|pastor|coach|uncle|aunt|auntie|grandma|grandpa|mama|papa|mom|mum|dad|meneer|mevrouw|dhr|mevr|herrn|hr|fr|m)\.?\s{1,2}$/iu

/** Salutations, role labels and phrases after which a name follows. */
const STRONG_BEFORE = new RegExp(
  [
    "(?:^|[^\\p{L}])(?:dear|hi|hiya|hello|hey|hallo|hola|bonjour|ciao|salut|liebe|lieber|querida|querido|cher|chère|caro|cara|greetings|morning|afternoon|evening|thanks|thank you|attn|attention|cc|bcc|fao|c\\/o)[ ,]{1,3}$",
    "(?:^|[^\\p{L}])(?:patient|pt|name|names|patient name|full name|first name|last name|surname|given name|family name|nombre|nom|prénom|vorname|nachname|nome|cognome|employee|staff|contact|emergency contact|tenant|landlord|client|customer|member|applicant|candidate|student|author|owner|witness|plaintiff|defendant|claimant|petitioner|respondent|beneficiary|insured|subscriber|guarantor|guardian|next of kin|nok|physician|provider|attending|resident|referring|surgeon|therapist|clinician|caregiver|driver|passenger|guest|visitor|sender|recipient|requester|reporter|assignee|reviewer|approver|manager|supervisor|signatory|signature|signed|from|to|victim|suspect|decedent|deceased|donor|mother|father|mom|mum|dad|son|daughter|wife|husband|spouse|partner|brother|sister|sibling|child|grandmother|grandfather|aunt|uncle|cousin|friend|colleague|coworker|boss|neighbor|neighbour|fiancé|fiancée|girlfriend|boyfriend|roommate|landlady|account holder|holder|cardholder|kind|given|payee|employer contact|referee|attendee|guest name|traveller|traveler|pax)\\s{0,2}[:=#-]\\s{0,3}\"?$",
    "(?:^|[^\\p{L}])(?:signed by|prepared by|written by|reviewed by|approved by|authorized by|authorised by|referred by|seen by|examined by|assigned to|reported by|submitted by|requested by|created by|entered by|dictated by|transcribed by|witnessed by|on behalf of|in the name of|care of|née|nee|aka|a\\.k\\.a\\.|my name is|name is|name's|i am|i'm|this is|je m'appelle|ich bin|ich heiße|me llamo|mi chiamo|soy)\\s{1,2}$",
    "(?:^|[^\\p{L}])(?:patient|mother|father|son|daughter|wife|husband|spouse|partner|brother|sister|child|grandmother|grandfather|aunt|uncle|cousin|friend|colleague|coworker|boss|neighbor|neighbour|girlfriend|boyfriend|roommate|employee|tenant|client|customer|mr|ms|mrs|nurse|doctor|dr|caller|contractor|intern|candidate|applicant|resident|member|student|officer|witness|baby|infant|toddler|teen|teenager|pt)\\s{1,2}$"
  ].join("|"),
  "iu"
)

/** Verbs and prepositions of people before a name ("told Kofi", "ask maria", "cc: Jun"). */
const VERB_BEFORE =
  /(?:^|[^\p{L}])(?:told|tell|tells|telling|ask|asked|asks|asking|call|called|calling|phone|phoned|ring|rang|email|emailed|e-mail|e-mailed|mail|text|texted|message|messaged|dm|dm'd|ping|pinged|thank|thanked|thanks to|meet|met|meeting with|remind|reminded|notify|notified|contact|contacted|spoke to|spoke with|speak to|speak with|spoken to|talk to|talked to|talked with|talking to|chat with|chatted with|wrote to|write to|reply to|replied to|forward to|forwarded to|sent to|send to|give|gave|let|invite|invited|hire|hired|fire|fired|visit|visited|visiting|see|saw|introduce|introduced|with|and|per|via|by|for|from|to|ask for|paging|page|loop in|looped in|cc|cc'd|cc:|@)\s{1,2}$/iu

/** What follows a person ("Kofi said", "Okafor, MD", "Anna (45)"). */
const AFTER_PERSON =
  /^(?:'s|’s|'|,? (?:said|says|say|told|tells|asked|asks|called|calls|wrote|writes|emailed|texted|replied|replies|mentioned|mentions|reported|reports|explained|noted|notes|confirmed|confirms|agreed|agrees|signed|approved|requested|requests|wants|wanted|needs|needed|thinks|thought|feels|felt|knows|knew|went|came|left|arrived|joined|works|worked|lives|lived|died|passed|was born|and (?:i|me|we|his|her)|who|from (?:hr|sales|support|accounting|legal|finance|it)|\(\d{1,3}\)|\(she|\(he|\(they|\(her|\(his)\b|,? (?:md|m\.d\.|rn|np|pa-c|phd|ph\.d\.|esq|jr|sr|iii|ii|dds|do|lpn|cnp|mba|cpa)\b)/iu

const SIGN_OFF =
  /(?:^|\n)[ \t]*(?:thanks|thank you|many thanks|thanks again|cheers|regards|best|best regards|kind regards|warm regards|warmly|sincerely|yours sincerely|yours faithfully|yours truly|yours|respectfully|all the best|best wishes|take care|love|xoxo|mit freundlichen grüßen|viele grüße|liebe grüße|grüße|gruß|cordialement|bien à vous|saludos|un saludo|atentamente|cordiali saluti|saluti|met vriendelijke groet|groeten|pozdrawiam|med vänlig hälsning|hälsningar|mvh|vennlig hilsen|--|—|-|sent from my \w+)[ \t]*[,.!]?[ \t]*\r?\n[ \t]*$/iu

/** Header cells that name a column of person names. */
const NAME_COLUMN = /^(?:(?:first|last|given|family|full|middle|patient|customer|client|contact|employee|member|owner|sender|recipient|author|assignee|person)[ _-]?name|name|names|surname|forename|firstname|lastname|nombre|apellido|apellidos|nom|prénom|vorname|nachname|nome|cognome)$/i

/** Key-value pairs whose value is a person's name: `"first_name": "kofi"`, `patient_name=Ana Ruiz`. */
const NAME_KEY =
  /(?:^|[^\p{L}_])"?(?:(?:first|last|given|family|full|middle|patient|customer|client|contact|employee|member|owner|sender|recipient|author|assignee|person|display|legal|user)[ _-]?name|firstname|lastname|surname|fullname|name)"?\s{0,2}[:=]\s{0,2}["']?(?=[\p{L}])/giu

const TRIGGER_WORDS = wordsOf(TITLE, STRONG_BEFORE, VERB_BEFORE)
const TRIGGER_AFTER = wordsOf(AFTER_PERSON, SPEECH_AFTER)

const isUpperStart = (s: string): boolean => {
  const c = s[0]
  return c !== c.toLowerCase()
}

interface Info {
  /** given-name weight 0..9 */
  g: number
  /** family-name weight 0..9 */
  f: number
  /** commonness as an English word: 0 none, 1 (most common) .. 7 (rare) */
  w: number
  decoy: boolean
}

const NONE: Info = { g: 0, f: 0, w: 0, decoy: false }

const infoCache = new Map<number, Info>()
const infoOfCode = (code: number, decoy: boolean): Info => {
  const id = decoy ? code + 1000 : code
  let i = infoCache.get(id)
  if (i === undefined) infoCache.set(id, (i = { g: Math.floor(code / 100), f: Math.floor(code / 10) % 10, w: code % 10, decoy }))
  return i
}

const infoOf = (word: string, gz: Gazetteer): Info => {
  let key = word.includes("’") ? word.replace(/’/g, "'") : word
  if (key.endsWith("'s")) key = key.slice(0, -2)
  if (key.endsWith("'") || key.endsWith("-")) key = key.slice(0, -1)
  let code = gz.names.get(key)
  // The lists are mostly written without accents: "lucía", "émilie", "siobhán" are found as "lucia"…
  if (code === undefined && /[^ -~]/.test(key)) {
    const folded = key.normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    if (folded !== key) code = gz.names.get(folded)
  }
  if (code !== undefined) return infoOfCode(code, gz.places.has(key))
  if (!key.includes("-") && !key.includes("'") && !key.startsWith("mc") && !key.startsWith("mac") && !key.startsWith("fitz")) return NONE
  if (key.includes("-")) {
    // "jean-pierre", "okonkwo-adeyemi": every part a name.
    let g = 0
    let f = 0
    for (const part of key.split("-")) {
      const c = gz.names.get(part)
      if (c === undefined || c % 10 >= 1) return NONE
      g = Math.max(g, Math.floor(c / 100))
      f = Math.max(f, Math.floor(c / 10) % 10)
    }
    return { g, f, w: 0, decoy: false }
  }
  if (/^(?:o'|d'|mc|mac|fitz)\p{L}{3}/u.test(key)) {
    const rest = key.replace(/^(?:o'|d'|mc|mac|fitz)/u, "")
    if (gz.names.has(rest) || key.startsWith("o'") || key.startsWith("mc")) return { g: 0, f: 2, w: 0, decoy: false }
  }
  return NONE
}

/** A word that is a name by the list (weight) and not an everyday English word. */
const pureName = (i: Info): boolean => (i.g > 0 || i.f > 0) && !i.decoy && (i.w === 0 || i.w >= 6 || (i.w >= 3 && Math.max(i.g, i.f) >= 5))

interface Span {
  start: number
  end: number
}

/** Where the sentence containing `start` begins: a capitalized word there proves nothing. */
const atSentenceStart = (text: string, start: number): boolean => {
  let i = start - 1
  while (i >= 0 && (text[i] === " " || text[i] === "\t" || text[i] === '"' || text[i] === "(" || text[i] === "*" || text[i] === "'")) i--
  if (i < 0) return true
  const c = text[i]
  return c === "." || c === "!" || c === "?" || c === "\n" || c === "\r" || c === ":" || c === ";" || c === "-" || c === "•" || c === ">" || c === "|" || c === "#"
}

const before = (text: string, start: number, n = 40): string => text.slice(Math.max(0, start - n), start)

/** Spans of person names in `text`, whose words `words` are (in order). */
export const findPersonNames = (text: string, words: ReadonlyArray<NameWord>, isWord: (lower: string) => boolean): Array<Span> => {
  const gz = loadGazetteer()
  const out: Array<Span> = []
  const n = words.length
  const infos: Array<Info | undefined> = new Array(n)
  const info = (k: number): Info => {
    let i = infos[k]
    if (i === undefined) infos[k] = i = infoOf(words[k].lower, gz)
    return i
  }
  const isInitial = (k: number): boolean => {
    const w = words[k]
    return w.end - w.start === 1 && w.capitalized && text[w.end] === "."
  }
  /** May word k stand in a chain of name parts? */
  const candidate = (k: number): boolean => {
    const w = words[k]
    if (embedded(text, w.start, w.end) || TITLES.has(w.lower) || NEVER_NAME.has(w.lower)) return false
    // "Jan 07", "Jun 3, 2024": a month or day before a figure is a date.
    if (CALENDAR.has(w.lower) && /^,? ?[0-9]/.test(text.slice(w.end, w.end + 3))) return false
    if (isInitial(k)) return true
    const i = info(k)
    if (w.capitalized) {
      if (i.g > 0 || i.f > 0) return true
      // An unknown capitalized word: a name only if it is no everyday word and not CamelCase ("FreeBot").
      return !isWord(w.lower.replace(/['’]s$/, "")) && !/^.\p{Ll}*\p{Lu}/u.test(text.slice(w.start, w.end)) || /^(?:Mc|Mac|O'|D'|De|Di|La|Le|Van|Von)\p{Lu}/u.test(text.slice(w.start, w.end))
    }
    return pureName(i)
  }
  const joined = (a: number, b: number): boolean => {
    const from = words[a].end
    const to = words[b].start
    if (to === from + 1 && text.charCodeAt(from) === 32) return true
    if (to > from + 2 || text.charCodeAt(from) !== 46) return false
    const gap = text.slice(from, to)
    if ((gap === ". " || gap === ".") && (isInitial(a) || (words[a].end - words[a].start <= 3 && words[a].capitalized))) return gap === ". " || words[b].end - words[b].start === 1
    return false
  }

  let k = 0
  while (k < n) {
    if (!candidate(k) || PARTICLES.has(words[k].lower)) {
      k++
      continue
    }
    // The chain: name parts joined by a space (particles and initials inside).
    const parts: Array<number> = [k]
    let j = k
    while (j + 1 < n && parts.length < 6) {
      if (!joined(j, j + 1)) break
      if (PARTICLES.has(words[j + 1].lower)) {
        // A particle joins only when a name part follows ("van der Berg", "bin Rashid").
        let p = j + 1
        while (p + 1 < n && PARTICLES.has(words[p + 1].lower) && joined(p, p + 1)) p++
        if (p + 1 < n && joined(p, p + 1) && candidate(p + 1) && !PARTICLES.has(words[p + 1].lower) && (words[p + 1].capitalized || pureName(info(p + 1)))) {
          for (let q = j + 1; q <= p + 1; q++) parts.push(q)
          j = p + 1
          continue
        }
        break
      }
      if (!candidate(j + 1)) break
      parts.push(j + 1)
      j++
    }
    if (parts.length >= 6) {
      // A heading or shouting, not a name: skip the whole run.
      while (j + 1 < n && joined(j, j + 1)) j++
      k = j + 1
      continue
    }
    const span = judge(text, words, parts, info, isInitial, isWord)
    if (span !== undefined) {
      out.push(span)
      k = parts.findIndex((p) => words[p].start >= span.end)
      k = k === -1 ? j + 1 : parts[k]
    } else {
      k++
    }
  }
  for (const s of structured(text, gz)) out.push(s)
  for (const s of handles(text, gz)) out.push(s)
  for (const s of mentionsAgain(text, words, out)) out.push(s)
  return out
}

/**
 * A person named once is named again by a part of that name ("Nguyễn Thị Lan … Lan cut the backlog",
 * "Svetlana Ivanova … can you pick up Svetlana"): every later word written exactly as a part of a found
 * name (two letters or more, capitalised, not a month, a place or a word that is never a name) is that person.
 */
const mentionsAgain = (text: string, words: ReadonlyArray<NameWord>, found: ReadonlyArray<Span>): Array<Span> => {
  const out: Array<Span> = []
  if (found.length === 0) return out
  const parts = new Set<string>()
  for (const span of found) {
    for (const part of text.slice(span.start, span.end).split(/[\s,]+/)) {
      const bare = part.replace(/['’]s$/, "")
      const lower = bare.toLowerCase()
      if (bare.length >= 2 && isUpperStart(bare) && !NEVER_NAME.has(lower) && !CALENDAR.has(lower) && !PLACES_AND_THINGS.has(lower) && !PARTICLES.has(lower) && !TITLES.has(lower))
        parts.add(bare)
    }
  }
  if (parts.size === 0) return out
  const covered = [...found].sort((a, b) => a.start - b.start)
  let c = 0
  for (const w of words) {
    if (!w.capitalized) continue
    while (c < covered.length && covered[c]!.end <= w.start) c++
    if (c < covered.length && covered[c]!.start <= w.start) continue
    let end = w.end
    if (w.lower.endsWith("'s") || w.lower.endsWith("’s")) end -= 2
    if (parts.has(text.slice(w.start, end)) && !embedded(text, w.start, end)) out.push({ start: w.start, end })
  }
  return out
}

/** A user name made of a person's names: "mette.kristensen", "a.silva", "chen-yuxin", "will_baker" (not inside an e-mail or path). */
const HANDLE = /(?<![\p{L}\p{N}._@/\\-])(\p{Ll}[\p{Ll}']{0,20})[._-](\p{Ll}[\p{Ll}'-]{1,25})(?![\p{L}\p{N}@/\\_-]|\.\p{L})/gu

const handles = (text: string, gz: Gazetteer): Array<Span> => {
  const out: Array<Span> = []
  if (!/\p{Ll}[._-]\p{Ll}/u.test(text)) return out
  for (const m of text.matchAll(HANDLE)) {
    const [, given, family] = m
    const g = infoOf(given!, gz)
    const f = infoOf(family!, gz)
    const givenOk = given!.length === 1 || (g.g >= 1 && (pureName(g) || g.g >= 3))
    const familyOk = (f.f >= 1 || f.g >= 2) && pureName(f)
    if (givenOk && familyOk && !NEVER_NAME.has(given!) && !NEVER_NAME.has(family!)) out.push({ start: m.index, end: m.index + m[0].length })
  }
  return out
}

/** Decides whether (a prefix of) the chain `parts` is a person, by the words and their context. */
const judge = (
  text: string,
  words: ReadonlyArray<NameWord>,
  parts: ReadonlyArray<number>,
  info: (k: number) => Info,
  isInitial: (k: number) => boolean,
  isWord: (lower: string) => boolean
): Span | undefined => {
  const first = words[parts[0]]
  const ctx = before(text, first.start)
  // "Tanaka Precision", "Hy-Vee Pharmacy": a business or place named after someone is not a person.
  const head = words[parts[parts.length - 1]]
  if (parts.length >= 2 && NOT_PERSON_HEAD.has(head.lower)) return undefined
  const nextAfter = parts[parts.length - 1] + 1 < words.length ? words[parts[parts.length - 1] + 1] : undefined
  if (nextAfter?.capitalized && NOT_PERSON_HEAD.has(nextAfter.lower) && text.slice(head.end, nextAfter.start) === " ") return undefined
  // The context patterns run only when the word before is one they name or punctuation is between (cheap test first).
  const prevWord = parts[0] > 0 ? words[parts[0] - 1] : undefined
  const gap = prevWord === undefined ? ctx : text.slice(prevWord.end, first.start)
  const triggered = prevWord === undefined || TRIGGER_WORDS.has(prevWord.lower) || /[:=#\n•*-]/.test(gap)
  const titled = triggered && TITLE.test(ctx)
  const strong = triggered && (titled || STRONG_BEFORE.test(ctx) || SIGN_OFF.test(ctx) || /(?:^|\n)[ \t]*(?:[-*•✅❌❓✔✓☑▪◦→]\uFE0F?|\d{1,2}[.)])[ \t]{1,3}$/u.test(ctx))
  const listed = !titled && /(?:^|\n)[ \t]*(?:[-*•✅❌❓✔✓☑▪◦→]\uFE0F?|\d{1,2}[.)])[ \t]{1,3}$/u.test(ctx)
  const names = parts.filter((p) => !PARTICLES.has(words[p].lower))
  const last = words[parts[parts.length - 1]]
  const after = text.slice(last.end - (last.lower.endsWith("'s") || last.lower.endsWith("’s") ? 2 : 0), last.end + 24)
  const nextWord = parts[parts.length - 1] + 1 < words.length ? words[parts[parts.length - 1] + 1] : undefined
  const afterTriggered = /^(?:['’,(]|\s*$)/.test(after) || (nextWord !== undefined && TRIGGER_AFTER.has(nextWord.lower))
  const personAfter = afterTriggered && AFTER_PERSON.test(after)
  const span = (from: number, to: number): Span => {
    let end = words[to].end
    const w = words[to].lower
    if (w.endsWith("'s") || w.endsWith("’s")) end -= 2
    return { start: words[from].start, end }
  }
  const allCaps = (k: number): boolean => {
    const s = text.slice(words[k].start, words[k].end)
    return s.length > 1 && s === s.toUpperCase()
  }

  // A chat or transcript speaker: the name opens its line (after a time stamp or bullet) and a colon follows.
  const lineStart = text.lastIndexOf("\n", first.start - 1) + 1
  if (
    text[last.end] === ":" &&
    SPEAKER_PREFIX.test(text.slice(lineStart, first.start)) &&
    names.length <= 3 &&
    names.every((p) => isInitial(p) || (pureName(info(p)) && !isWord(words[p].lower)) || (info(p).g >= 3 && speaksTwice(text, first.start, last.end))) &&
    !NOT_A_NAME_AFTER_CONTEXT.has(words[names[0]].lower)
  )
    return span(parts[0], names[names.length - 1])

  // A title, salutation, role label or sign-off: the chain is the name (up to four parts).
  if (strong && !listed) {
    const head = words[names[0]]
    if (NOT_A_NAME_AFTER_CONTEXT.has(head.lower)) return undefined
    const i0 = info(names[0])
    const ok = names.every((p) => words[p].capitalized || isInitial(p) || info(p).g > 0 || info(p).f > 0)
    // Lower case after context: a listed name that is not an everyday word ("dear maria", "patient: kofi mensah").
    const lowerOk = head.capitalized || (i0.g + i0.f > 0 && (pureName(i0) || titled))
    // After a sign-off, a line of unknown words is a team or a department ("Regards,\nAccounts Payable").
    const signed = SIGN_OFF.test(ctx) && !titled && !names.some((p) => info(p).g > 0 || info(p).f > 0)
    // An acronym after a label is a code, not a name ("Name: ACCT").
    if (ok && lowerOk && !signed && !(allCaps(names[0]) && i0.g + i0.f === 0)) {
      const to = names[Math.min(names.length, 4) - 1]
      return span(parts[0], to)
    }
  }

  if (names.length >= 2) {
    // Full names: given (or initial) then family name, or two listed names.
    const capital = names.every((p) => words[p].capitalized)
    const lower = names.every((p) => !words[p].capitalized)
    const inf = names.map(info)
    const known = inf.map((i) => i.g > 0 || i.f > 0)
    const hi = inf.map((i) => i.g >= 2 || i.f >= 2)
    // A very common given or family name ("John", "Smith", "Miller") counts as a name even though it is also a word.
    const wordy = inf.map((i, x) => !isInitial(names[x]) && i.w >= 1 && i.w <= 4 && Math.max(i.g, i.f) < 6)
    const firstGiven = isInitial(names[0]) || inf[0].g > 0
    const lastFamily = inf[inf.length - 1].f > 0 || inf[inf.length - 1].g >= 2
    if (capital) {
      const unknownNonWord = inf.map((i, x) => !known[x] && !isInitial(names[x]) && (i.w === 0 || i.w >= 6))
      const everyPartOk = names.every((_, x) => known[x] || unknownNonWord[x] || isInitial(names[x]))
      const evidence = (firstGiven && (lastFamily || unknownNonWord[unknownNonWord.length - 1])) || (hi[0] && known[known.length - 1])
      const allWordy = wordy.every(Boolean)
      // Places and things: every part one, or one then an unknown word ("Victoria Station"); a month or a day in it.
      const anyDecoy =
        ((inf.every((i) => i.decoy) || (inf[0].decoy && !known[known.length - 1])) && !personAfter) || names.some((p) => CALENDAR.has(words[p].lower))
      const shout = names.every((p) => allCaps(p)) && !known.every(Boolean)
      const weakHead = !isInitial(names[0]) && inf[0].w >= 1 && inf[0].w <= 3 && Math.max(inf[0].g, inf[0].f) < 5 && !personAfter
      if (everyPartOk && evidence && !allWordy && !anyDecoy && !shout && !weakHead && (hi.some(Boolean) || personAfter)) {
        // At a sentence start, a first part that is an ordinary word is not part of the name ("Thanks Maria Lopez").
        return span(parts[0], names[Math.min(names.length, 4) - 1])
      }
      // "Meeting Maria Lopez": drop a leading everyday word and judge the rest.
      if (wordy[0] && names.length >= 3 && !isInitial(names[0])) return judge(text, words, parts.slice(parts.indexOf(names[1])), info, isInitial, isWord)
    } else if (lower) {
      // Lower case: two listed names, neither an everyday word, one at least widely listed.
      const pure = inf.map((i) => pureName(i))
      if (pure[0] && pure[1] && inf[0].g >= 2 && (inf[1].f >= 2 || inf[1].g >= 3) && (hi[0] || hi[1])) return span(parts[0], names[1])
    } else {
      // Mixed case ("maria Lopez", "Kofi mensah"): every part a listed name and not an everyday word.
      if (names.every((p) => pureName(info(p)) || (words[p].capitalized && known[names.indexOf(p)] && !wordy[names.indexOf(p)])) && firstGiven)
        return span(parts[0], names[Math.min(names.length, 4) - 1])
    }
  }

  // One name: a listed given name that is not a word, or any name with a person's verb or possessive next to it.
  const k = names[0]
  const w = words[k]
  const i = info(k)
  if (isInitial(k) || (i.g === 0 && i.f === 0)) return undefined
  const bare = w.lower.replace(/['’]s$/, "")
  const speaks = afterTriggered && SPEECH_AFTER.test(after)
  // "Summer said", "Will's car": a name that is also a word, with a person's verb or possessive; never a month or a day.
  if (w.capitalized && !allCaps(k) && speaks && (i.g >= 3 || i.f >= 3) && !CALENDAR.has(bare) && (i.w >= 1 || !PLACES_AND_THINGS.has(bare))) return span(k, k)
  if (PLACES_AND_THINGS.has(bare)) return undefined
  const verbBefore = triggered && VERB_BEFORE.test(ctx)
  const sentenceStart = atSentenceStart(text, w.start)
  const pure = pureName(i)
  // Right after another capitalized word the chain was some other proper noun ("Christmas Eve").
  const prev = k > 0 ? words[k - 1] : undefined
  const afterProper =
    prev?.capitalized &&
    text.slice(prev.end, w.start) === " " &&
    (!atSentenceStart(text, prev.start) || !isWord(prev.lower) || PLACES_AND_THINGS.has(prev.lower))
  if (w.capitalized) {
    if (allCaps(k)) return undefined
    if (pure && i.g >= 3 && !sentenceStart && !afterProper) return span(k, k)
    if (pure && (i.g >= 2 || i.f >= 2) && (personAfter || verbBefore)) return span(k, k)
    if (!i.decoy && i.g >= 3 && i.w >= 2 && !sentenceStart && personAfter) return span(k, k)
    return undefined
  }
  if (pure && i.g >= 3 && (personAfter || verbBefore)) return span(k, k)
  return undefined
}

/** Names in CSV/TSV columns headed first/last/name, and values of name keys in JSON, YAML and logs. */
const structured = (text: string, gz: Gazetteer): Array<Span> => {
  const out: Array<Span> = []
  if (!/name/i.test(text) && !/nom|nachname|vorname|cognome|apellido/i.test(text)) return out
  // Key-value pairs.
  for (const m of text.matchAll(NAME_KEY)) {
    const from = m.index + m[0].length
    const value = /^[\p{L}][\p{L}.'’ -]{0,60}/u.exec(text.slice(from, from + 62))
    if (value === null) continue
    const v = value[0].replace(/[ .'-]+$/, "")
    const parts = v.split(/ +/)
    if (parts.length > 4) continue
    const ok = parts.every((p) => {
      const lower = p.toLowerCase()
      const i = infoOf(lower, gz)
      return i.g > 0 || i.f > 0 || (isUpperStart(p) && p.length > 1 && !/^\p{Lu}+$/u.test(p)) || /^\p{Lu}\.?$/u.test(p)
    })
    // A key-name right after the key ("name": "get_weather") is not a person: its value has an underscore or is one common word.
    const nextChar = text[from + v.length]
    if (!ok || nextChar === "_" || nextChar === "(" || nextChar === "/") continue
    if (parts.length === 1 && !pureName(infoOf(v.toLowerCase(), gz)) && !isUpperStart(v)) continue
    out.push({ start: from, end: from + v.length })
  }
  // Delimited tables: a header line with a name column, then its rows.
  const lines = text.split("\n")
  let offset = 0
  let columns: Array<number> | undefined
  let sep = ","
  for (const line of lines) {
    const start = offset
    offset += line.length + 1
    if (line.trim() === "") {
      columns = undefined
      continue
    }
    if (columns === undefined) {
      if (line.length > 2000) continue
      for (const s of ["\t", ",", ";", "|"]) {
        if (!line.includes(s)) continue
        const cells = line.split(s).map((c) => c.trim().replace(/^"|"$/g, ""))
        const found = cells.flatMap((c, x) => (NAME_COLUMN.test(c) ? [x] : []))
        if (found.length > 0 && cells.length >= 2) {
          columns = found
          sep = s
          break
        }
      }
      continue
    }
    const cells = line.split(sep)
    let pos = start
    for (let x = 0; x < cells.length; x++) {
      const cell = cells[x]
      if (columns.includes(x)) {
        const trimmed = cell.trim().replace(/^"|"$/g, "")
        if (/^[\p{L}][\p{L}.'’ -]{0,60}$/u.test(trimmed) && trimmed.split(/ +/).length <= 4) {
          const at = line.indexOf(trimmed, pos - start) + start
          out.push({ start: at, end: at + trimmed.length })
        }
      }
      pos += cell.length + sep.length
    }
  }
  return out
}
