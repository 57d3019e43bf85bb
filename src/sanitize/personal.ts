/**
 * Personal identifiers the scanner's recognizers miss: birth dates after a label in several
 * languages and in every common date shape, e-mail addresses written to dodge harvesters
 * ("anna [dot] kowalska [at] wp [dot] pl", "john dot smith at gmail dot com"), and national
 * identity numbers (by label, or by a shape with a check character where one exists).
 */
import { type Detector, type Emit, MAX_HITS_PER_DETECTOR, type RegexRule, regexDetector } from "./detector.js"

const MONTHS = [
  "jan(?:uary|uar|uari|vier|eiro)?",
  "feb(?:ruary|ruar|ruari|rero|braio)?",
  "f[ée]v(?:rier|ereiro)?",
  "mar(?:ch|s|zo)?",
  "m[äa]rz",
  "maart",
  "mar[cç]o",
  "apr(?:il|ile)?",
  "avr(?:il)?",
  "abr(?:il)?",
  "may(?:o)?",
  "maio",
  "mai",
  "maggio",
  "mei",
  "jun(?:e|i|io|ho)?",
  "juin",
  "giugno",
  "jul(?:y|i|io|ho)?",
  "juil(?:let)?",
  "luglio",
  "aug(?:ust|ustus)?",
  "ao[uû]t",
  "ago(?:sto)?",
  "sep(?:t|tember|tembre|tiembre)?",
  "set(?:tembre|embro)?",
  "oct(?:ober|obre|ubre)?",
  "okt(?:ober)?",
  "ott(?:obre)?",
  "nov(?:ember|embre|iembre)?",
  "dec(?:ember|embre)?",
  "dez(?:ember|embro)?",
  "out(?:ubro)?",
  "d[ée]c(?:embre)?",
  "dic(?:iembre|embre)?",
  "ene(?:ro)?",
  "gen(?:naio)?"
].join("|")
const MONTH = `(?:${MONTHS})\\.?`
const DAY = "(?:0?[1-9]|[12][0-9]|3[01])(?:st|nd|rd|th|er)?"
const YEAR = "(?:19|20)?[0-9]{2}"

/** Every shape a birth date is written in: numeric in any order, with the month's name in several languages, or CJK. */
const DATE = [
  "[0-9]{1,2}[/.-][0-9]{1,2}[/.-](?:19|20)?[0-9]{2}",
  "(?:19|20)[0-9]{2}[/.-][0-9]{1,2}[/.-][0-9]{1,2}",
  "[0-9]{1,2} [0-9]{1,2} (?:19|20)[0-9]{2}",
  `${MONTH}[ -]${DAY},?[ -](?:19|20)[0-9]{2}`,
  `${DAY}(?: of| de)?[ -]${MONTH}(?:,| de)?[ -]${YEAR}`,
  "(?:19|20)[0-9]{2} ?[年년] ?[0-9]{1,2} ?[月월] ?[0-9]{1,2} ?[日일]",
  "(?:19|20)[0-9]{6}",
  "[0-9]{4}(?:19|20)[0-9]{2}"
].join("|")

/** Labels of a birth date: English (and field names), German, French, Spanish, Italian, Dutch, Portuguese, Polish, Swedish, Turkish, Vietnamese, CJK. */
const BIRTH_LABEL = [
  "dob",
  "d\\.o\\.b\\.?",
  "date[ _-]?of[ _-]?birth",
  "birth[ _-]?date",
  "birthday",
  "b-?day",
  "born(?: on)?",
  "geburtsdatum",
  "geb\\.",
  "geboren(?: am)?",
  "date de naissance",
  "n[ée]e? le",
  "fecha de nacimiento",
  "nacid[oa]",
  "data di nascita",
  "nat[oa] (?:a|il)",
  "geboortedatum",
  "data de nascimento",
  "data urodzenia",
  "urodzon[ya]",
  "f[öo]delsedatum",
  "doğum tarihi",
  "sinh ngày",
  "ngày sinh",
  "生年月日",
  "出生日期",
  "생년월일"
].join("|")

/**
 * A birth date: its label, then at most a few words, field punctuation or dotted leaders
 * ("Date of birth on file:", `"dob": "`, "dob .......", "nato a Palermo il"), then the date.
 */
const BIRTH_DATE: RegexRule = {
  entity_type: "date_of_birth",
  library: "pii",
  severity: "warning",
  description: "Date of birth next to its label",
  pattern: new RegExp(`(?<![\\p{L}])(?:${BIRTH_LABEL})(?![\\p{L}])[^\\n\\d;]{0,24}?(${DATE})(?![0-9])`, "dgiu"),
  group: 1,
  validate: (value) => !/^[0-9]{8}$/.test(value) || compactDateValid(value)
}

/** Eight digits are a date when read as YYYYMMDD, MMDDYYYY or DDMMYYYY. */
const compactDateValid = (digits: string): boolean => {
  const n = (from: number, length: number) => Number(digits.slice(from, from + length))
  const plausible = (year: number, month: number, day: number) => year >= 1900 && year <= 2099 && month >= 1 && month <= 12 && day >= 1 && day <= 31
  return plausible(n(0, 4), n(4, 2), n(6, 2)) || plausible(n(4, 4), n(0, 2), n(2, 2)) || plausible(n(4, 4), n(2, 2), n(0, 2))
}

/** Bank words that make "account 12345678" a bank account. */
const BANK_CONTEXT = /\b(?:bank|banco|banque|sort ?code|routing|aba|bsb|ifsc|branch|iban|swift|bic|wire|transfer|payee|beneficiary|payroll|direct (?:deposit|debit)|deposit|checking|chequing|savings|cheque|refund)\b/i

/**
 * Bank account numbers after their label: explicit ones (sort code, routing number, account number,
 * BSB, IFSC, Kontonummer, conta, cuenta, CBU…) anywhere, a bare "account"/"acc" only with a bank word
 * near it. Sort code and account number written together make one span.
 */
const BANK_ACCOUNT: RegexRule = {
  entity_type: "bank_account",
  library: "pii",
  severity: "critical",
  description: "Bank account number, sort code or routing number next to its label",
  pattern:
    /(?<![\p{L}])(?:(?i:sort(?: ?code)?|routing(?: (?:no\.?|number|#))?|ABA|BSB|IFSC|branch code|ag[êe]ncia|conta(?: corrente)?|cuenta|CBU|CLABE|compte|kontonummer|konto|rekeningnummer|rekening|a\/c(?: no\.?)?|acc(?:oun)?t(?:\.|ount)?(?: (?:no\.?|number|num|#))?)|(?i:account))\s{0,2}(?:is\s{1,2})?[:#]?\s{0,3}((?:[0-9]{2}-[0-9]{2}-[0-9]{2}|[0-9][0-9 ./-]{3,30}[0-9X])(?:[ ,/]{1,3}(?i:account(?: number| no\.?)?|acc(?:oun)?t|acc)\s{0,2}[:#]?\s{0,3}[0-9][0-9 -]{4,20}[0-9])?)(?![0-9])/dgu,
  group: 1,
  validate: (value, text, start) => {
    const digits = value.replace(/[^0-9]/g, "")
    if (digits.length < 5 || digits.length > 34) return false
    const before = text.slice(Math.max(0, start - 100), start)
    // A bare "account" is a bank account only near a bank word; "AWS account 1234…" is not.
    if (/(?:^|[^\p{L}])acc(?:oun)?t\.?[:#\s]*$/iu.test(before.slice(-20)) && !/(?:no\.?|number|num|#)\s*[:#]?\s*$/i.test(before)) {
      const around = before + text.slice(start, start + value.length + 60)
      if (!BANK_CONTEXT.test(around) || /\b(?:aws|gcp|azure|account id)\b/i.test(before.slice(-40))) return false
    }
    return true
  }
}

/** "[at]", "(at)", "{at}", "<at>", or the bare word "at" between spaces. */
const AT = /\s{0,2}(?:[[({<]\s?(?:at|@|arobase|chiocciola|arroba|klammeraffe)\s?[\])}>]|(?<=\s)(?:at|arobase|arroba)(?=\s))\s{0,2}/gi
const DOT = String.raw`(?:\s?[[({<]\s?(?:dot|point|punto|punkt|\.)\s?[\])}>]\s?|\s(?:dot|punkt|point|punto)\s|\.)`
const DOMAIN = new RegExp(`([A-Za-z0-9-]{1,63}(?:${DOT}[A-Za-z0-9-]{1,63}){1,4})`, "iy")
const LOCAL = new RegExp(String.raw`(?:^|[^\w.@])([A-Za-z0-9_%+-]{1,64}(?:${DOT}[A-Za-z0-9_%+-]{1,64}){0,4})$`, "i")
const WRITTEN_DOT = /\s?[[({<]\s?(?:dot|\.)\s?[\])}>]\s?|\s(?:dot|punkt|point|punto)\s/i
const TLDS = new Set(["com", "org", "net", "edu", "gov", "info", "io", "co", "me", "biz", "email", "mail", "online", "app", "dev"])
const MAIL_PROVIDERS =
  /^(?:gmail|googlemail|yahoo|ymail|hotmail|outlook|live|msn|icloud|me|mac|aol|proton|protonmail|pm|gmx|web|t-online|freenet|wp|o2|onet|interia|orange|free|laposte|sfr|libero|virgilio|tiscali|alice|telefonica|movistar|terra|uol|bol|ziggo|kpnmail|hetnet|btinternet|sky|virginmedia|talktalk|bigpond|optusnet|rediffmail|qq|163|126|naver|daum|yandex|mail|rambler|seznam|zoho|fastmail|hey|tutanota|comcast|verizon|att|sbcglobal|cox|charter|shaw|rogers|sympatico)$/i

const lastLabel = (domain: string): string => {
  const parts = domain.split(new RegExp(DOT, "i"))
  return (parts[parts.length - 1] ?? "").toLowerCase()
}

/**
 * An e-mail written with words or brackets for "@" and ".". A bare " at " is common prose, so it
 * counts only with a written dot somewhere, a known mail provider, or a local part no word has.
 */
const writtenEmails = (text: string, emit: Emit): void => {
  if (!/\b(?:at|arobase|arroba|chiocciola|klammeraffe)\b|[[({<]\s?@/i.test(text)) return
  const at = new RegExp(AT.source, AT.flags)
  let hits = 0
  for (let m = at.exec(text); m !== null; m = at.exec(text)) {
    const marker = m[0]
    const bare = !/[[({<]/.test(marker)
    DOMAIN.lastIndex = m.index + marker.length
    const domain = DOMAIN.exec(text)
    if (domain === null) continue
    const tld = lastLabel(domain[1]!)
    if (!/^[a-z]{2,}$/.test(tld) || !(tld.length === 2 || TLDS.has(tld))) continue
    const before = text.slice(Math.max(0, m.index - 200), m.index)
    const local = LOCAL.exec(before)
    if (local === null) continue
    const localPart = local[1]!
    if (!/[A-Za-z]/.test(localPart)) continue
    if (bare) {
      const firstLabel = domain[1]!.split(new RegExp(DOT, "i"))[0] ?? ""
      const written = WRITTEN_DOT.test(domain[1]!) || WRITTEN_DOT.test(localPart)
      const unusual = /[0-9_.+%]/.test(localPart)
      if (!written && !unusual && !MAIL_PROVIDERS.test(firstLabel)) continue
    }
    const start = m.index - localPart.length
    const end = DOMAIN.lastIndex
    if (!emit(start, end) || ++hits >= MAX_HITS_PER_DETECTOR) return
    at.lastIndex = end
  }
}

const WRITTEN_EMAIL: Detector = {
  entity_type: "email_address",
  library: "pii",
  severity: "warning",
  description: "E-mail address written with words or brackets for @ and the dots",
  run: writtenEmails
}

/** Spanish DNI/NIE: eight digits (or X/Y/Z and seven) and the letter the remainder mod 23 picks. */
const DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
const dniValid = (match: string): boolean => {
  const value = match.replace(/[\s-]/g, "").toUpperCase()
  const digits = value.slice(0, -1).replace(/^[XYZ]/, (l) => String("XYZ".indexOf(l)))
  if (!/^[0-9]{8}$/.test(digits)) return false
  return DNI_LETTERS[Number(digits) % 23] === value[value.length - 1]
}

/** Brazilian CPF: eleven digits, the last two check digits (mod 11). */
const cpfValid = (match: string): boolean => {
  const d = match.replace(/[^0-9]/g, "")
  if (d.length !== 11 || /^(\d)\1+$/.test(d)) return false
  const check = (length: number) => {
    let sum = 0
    for (let i = 0; i < length; i++) sum += Number(d[i]) * (length + 1 - i)
    const r = (sum * 10) % 11
    return r === 10 ? 0 : r
  }
  return check(9) === Number(d[9]) && check(10) === Number(d[10])
}

/** Labels in front of an identity document number, in several languages (in any case; the number itself in capitals and digits). */
const ID_LABEL = [
  "passport",
  "passeport",
  "pasaporte",
  "passaporto",
  "reisepass",
  "paspoort",
  "driver'?s licen[cs]e",
  "driving licen[cs]e",
  "national (?:id|identity|insurance)",
  "ni number",
  "id card",
  "identity card",
  "personalausweis",
  "steuer-?id",
  "steueridentifikationsnummer",
  "sozialversicherungsnummer",
  "carte d'identit[ée]",
  "num[ée]ro de s[ée]curit[ée] sociale",
  "codice fiscale",
  "burgerservicenummer",
  "social insurance number",
  "tax file number",
  "personnummer",
  "f[øo]dselsnummer",
  "tax id",
  "tax reference",
  "taxpayer pin",
  "id[ _-]?(?:no|nr|number|num)",
  "id card",
  "resident id",
  "steuernummer",
  "steuer-?identifikationsnummer",
  "sv-nummer",
  "ahv-nr",
  "s[ée]curit[ée] sociale",
  "n° s[ée]cu",
  "registre national",
  "my number",
  "licence",
  "license",
  "cart[ãa]o de cidad[ãa]o",
  "kimlik no",
  "dbs[ _-]?number",
  "doc no",
  "a-number",
  "個人番号",
  "マイナンバー",
  "주민등록번호",
  "身份证号码?",
  "居民身份证"
].join("|")

/** Acronym labels, matched in capitals only: in lower case most are words ("pan", "sin", "tin"). */
const ID_ACRONYM =
  "NINO|NIN|DNI|NIE|NIF|NIP|BSN|PESEL|AADHAAR|Aadhaar|PAN|SIN|TFN|CPF|CURP|RFC|TIN|ITIN|Medicare|PPSN|PPS|UTR|AHV|RRN|CNIC|CUIL|BVN|CCCD|RG|ID|KRA PIN"

/**
 * Between the label and the number: a qualifier in brackets ("(NSW)", "(Nigeria)"), "no."/"nos."/
 * "n.º"/"số", "is", "for verification", field punctuation or dotted leaders (`id (PPSN) .. 6183924KA`).
 */
const ID_NUMBER = String.raw`(?:\s{0,2}\([^)\n]{1,24}\))?(?i:\s{0,2}(?:nos?\.?|nr\.?|number|num[ée]ro|n\.?[°º]|#|số|for verification))?(?i:\s{1,3}(?:is|was|on file))?[\s:：#=\-–.()"'\\]{0,20}?([A-Z0-9](?:[A-Z0-9]|[ ./-](?=[A-Z0-9])){4,24})(?![\p{L}0-9])`

/** An identity number has at least six characters, four of them digits ("RFC 9162" is a document). */
/** Six characters or more, five digits or more ("MIT 2024" after "license" is not one), or India's PAN shape. */
const idNumberValid = (value: string): boolean =>
  value.replace(/[ ./-]/g, "").length >= 6 && ((value.match(/[0-9]/g)?.length ?? 0) >= 5 || /^[A-Z]{5}[0-9]{4}[A-Z]$/.test(value))

/** A US employer identification number (NN-NNNNNNN) names a business, not a person. */
export const EMPLOYER_ID = /^(?:EIN )?[0-9]{2}-[0-9]{7}$/

/** A bare "ID" names an identity number only when nothing before it says whose id it is (order, ticket, user…). */
const NOT_PERSON_ID = /\b(?:doc|dispute|meeting|conference|webinar|form|room|chat|call|part|model|serial|asset|vehicle|order|ticket|transaction|txn|customer|user|session|request|job|case|invoice|tracking|reference|ref|account|device|client|product|item|message|event|build|run|trace|span|correlation|merchant|app|tenant|org|organization|project|document|file|record|batch|employee|member|policy|claim|patient)[ _-]?$/i
const acronymIdValid = (value: string, text: string, start: number): boolean => {
  if (!idNumberValid(value)) return false
  const label = /([A-Za-z][A-Za-z ]*?)[\s:：#=\-–.()]*$/.exec(text.slice(Math.max(0, start - 40), start))
  if (label !== null && /(?:^|\s)ID$/.test(label[1]!.trim())) {
    const before = text.slice(Math.max(0, start - 60), start).replace(/\s*ID[\s:#=.-]*$/, "")
    return !NOT_PERSON_ID.test(before) && value.replace(/[^0-9]/g, "").length >= 6
  }
  return true
}

const RULES: ReadonlyArray<RegexRule> = [
  BIRTH_DATE,
  BANK_ACCOUNT,
  {
    entity_type: "national_id",
    library: "pii",
    severity: "critical",
    description: "Identity document or national identity number next to its label",
    pattern: new RegExp(`(?<![\\p{L}])(?i:${ID_LABEL})(?![\\p{L}])${ID_NUMBER}`, "dgu"),
    group: 1,
    validate: (value) => idNumberValid(value) && !EMPLOYER_ID.test(value)
  },
  {
    entity_type: "national_id",
    library: "pii",
    severity: "critical",
    description: "Identity number next to its acronym (DNI, BSN, PESEL, Aadhaar, SIN, CPF…)",
    pattern: new RegExp(`(?<![\\p{L}])(?:${ID_ACRONYM})(?![\\p{L}])${ID_NUMBER}`, "dgu"),
    group: 1,
    validate: acronymIdValid
  },
  {
    entity_type: "national_id",
    library: "pii",
    severity: "critical",
    description: "UK National Insurance number",
    pattern: /\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]\b/g
  },
  {
    entity_type: "national_id",
    library: "pii",
    severity: "critical",
    description: "Spanish DNI or NIE (check letter valid)",
    pattern: /\b[XYZ]?[0-9]{7,8}-?[A-Z]\b/g,
    validate: dniValid
  },
  {
    entity_type: "national_id",
    library: "pii",
    severity: "critical",
    description: "Brazilian CPF (check digits valid)",
    hint: "-",
    pattern: /\b[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}\b/g,
    validate: cpfValid
  }
]

export const PERSONAL_DETECTORS: ReadonlyArray<Detector> = [...RULES.map(regexDetector), WRITTEN_EMAIL]
