/**
 * Passwords, AWS secret access keys and key-word-anchored secrets as people actually write
 * them: prose ("my password is ..."), config/INI/TOML/JSON/YAML, env files, command lines and
 * URL user-info. Only the value is reported, never the key word. Placeholders (`****`,
 * `<your-password>`, `${VAR}`, `changeme`) and code references (`req.body.password`) are left
 * alone. Every quantifier is bounded: scanning stays linear.
 */
import { secretValueValid } from "../scan/index.js"
import type { RegexRule } from "./detector.js"
import { entropy } from "./validators.js"

const PASSWORD_WORD = "(?:password|passwd|passphrase|passcode|pwd|pass|pw)"
/** Before the key word: no letter, or a lower-case one when the word starts a camel-case part (`adminPassword`). */
const WORD_START = "(?:(?<![A-Za-z])|(?-i:(?<=[a-z0-9])(?=P)))"
/** Between a key word and "is": "the passphrase for the offsite is ...". */
const QUALIFIER = "(?:[ \\t](?:for|to|of|on)[ \\t][^\\n.:;!?]{1,40}?)?"
/** Quoted (spaces allowed) or a bare run; `&name=` ends a bare value (query strings). */
const VALUE = `("[^"\\r\\n]{1,256}"|'[^'\\r\\n]{1,256}'|(?:[^\\s"'&,;<>]|&(?![A-Za-z_]{1,30}=)){1,256})`

const quoted = (value: string): boolean => /^(["'`]).*\1$/s.test(value)
const unquote = (value: string): string => (quoted(value) ? value.slice(1, -1) : value)

/** Beyond scan's placeholders: `[hidden]`, `$VAR`, `{{ var }}`, bullets, "your ...". */
const PLACEHOLDER = /^(?:\[[^\]]*\]|\$[A-Za-z_]\w*|\{\{.*\}\}|[•●*]+|(?:your|my|the|new|old)[-_ ].*|n\/a|tbd)$/i

/** Unquoted values that are program text, not secrets: `req.body.password`, `getenv("X")`, `os.environ[...]`. */
const CODE =
  /^(?:(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*|[A-Za-z_$][\w$.]*\(.*|(?:os\.environ|process\.env|env|ENV|config|settings|params)\b.*|[A-Z]+(?:_[A-Z]+)+;?)$/

/** Words that follow "password:" as labels in forms and messages, not as values. */
const LABEL_WORDS = new Set([
  "required", "optional", "incorrect", "invalid", "expired", "hidden", "reset", "empty", "blank", "unknown", "protected",
  "missing", "needed", "sent", "same", "unchanged", "updated", "changed", "masked", "encrypted", "hashed", "provided", "set",
  // Type names: `password: string;` declares a field.
  "string", "str", "number", "int", "bytes", "text", "varchar", "boolean", "any", "secretstr"
])

/** `PWD=/home/deploy` is a working directory and `@file` a file reference, not a password. */
const PATH_OR_FILE = /^(?:\/[\w.-]+(?:\/[\w.-]+)*\/?|~\/\S*|@[\w./-]+`?)$/

/** Digits, symbols or inner capitals: what sets a password apart from an ordinary prose word. */
const valueLike = (value: string): boolean =>
  quoted(value) || /[0-9]/.test(value) || /[!@#$%^&*+=?~_/\\|{}[\]()]/.test(value) || /[a-z][A-Z]/.test(value)

const acceptable = (value: string): boolean => {
  const inner = unquote(value)
  if (!secretValueValid(value) || PLACEHOLDER.test(inner) || PATH_OR_FILE.test(inner)) return false
  if (quoted(value)) return true
  return !CODE.test(inner) && !LABEL_WORDS.has(inner.toLowerCase()) && !inner.endsWith(":")
}

/** Trailing sentence punctuation is dropped when the sentence goes on after the value. */
const trimmed = (match: string, text: string, start: number): number => {
  if (quoted(match)) return match.length
  let end = match.length
  const rest = text.slice(start + end, start + end + 80).split("\n", 1)[0] ?? ""
  if (!/[A-Za-z]/.test(rest)) return end
  while (end > 0 && ".,;:!?)".includes(match[end - 1] ?? "")) end--
  return end
}

/** `password = x`, `DB_PASSWORD=x`, `"password": "x"`, `--password=x`, `'password' => 'x'`. */
const assigned = (match: string, text: string, start: number): number => {
  const end = trimmed(match, text, start)
  return acceptable(match.slice(0, end)) ? end : 0
}

/** `password: x`: a config key takes any value; mid-sentence ("temp password: x") it must look like one. */
const labelled = (match: string, text: string, start: number): number => {
  const end = trimmed(match, text, start)
  const value = match.slice(0, end)
  if (!acceptable(value)) return 0
  const lineStart = text.lastIndexOf("\n", start - 1) + 1
  const configKey = /^[ \t]*(?:-[ \t]{1,4})?["']?[\w.-]{1,60}["']?[ \t]{0,4}:[ \t]{0,4}$/.test(text.slice(lineStart, start))
  return configKey || valueLike(value) ? end : 0
}

/** Prose and bare forms: only value-looking tokens ("the secret is patience" stays, "password safely?" too). */
const spoken = (match: string, text: string, start: number): number => {
  const end = trimmed(match, text, start)
  const value = match.slice(0, end)
  const word = quoted(value) ? value : value.replace(/[.,;:!?)]+$/, "")
  return acceptable(value) && valueLike(word) ? end : 0
}

/** Codes that are not secrets: postcodes, dialling, error and status codes, promotions, bookings, billing and product codes. */
const NOT_A_SECRET_CODE =
  /\b(?:zip|post|postal|area|country|dial(?:ling)?|error|status|exit|response|http|promo|discount|coupon|voucher|gift|product|source|tracking|booking|confirmation|reference|order|iata|airport|sort|bank|branch|swift|bic|tax|icd|diagnosis|billing|procedure|cpt|hs|customs|class|course|qr|bar|colou?r|country|language|currency|region|cost)[ -]?code/i

/** Command lines where an unquoted `-p` is the password: database clients, and `docker login -u … -p`. */
const MYSQL_LINE = /\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|docker login|podman login|helm registry login)\b/

/** `-p'x'` anywhere; unquoted `-px` only on a MySQL command line (elsewhere `-p8443:443` is a port). */
const dashP = (match: string, text: string, start: number): boolean => {
  const inner = unquote(match)
  if (/^[\d.:/-]+(?:\/(?:tcp|udp))?$/i.test(inner) || !acceptable(match)) return false
  if (quoted(match)) return true
  const lineStart = text.lastIndexOf("\n", start - 1) + 1
  return MYSQL_LINE.test(text.slice(lineStart, start))
}

const URL_PLACEHOLDER = /^(?:\*+|x+|pass|password|passwd|pwd|secret|changeme|\$\{[^}]*\}|\$[A-Za-z_]\w*|<[^>]*>|\{\{.*\}\}|%[A-Za-z_]+%)$/i

/** AWS secret keys are random base64: all three character classes, high entropy. */
const awsSecretShape = (value: string): boolean => /[a-z]/.test(value) && /[A-Z]/.test(value) && /[0-9]/.test(value) && entropy(value) >= 4

/** Random-looking token: 16+ characters, letters and digits, entropy 3.3+ (trailing dots dropped). */
const randomToken = (match: string): number => {
  let end = match.length
  while (end > 0 && match[end - 1] === ".") end--
  const value = match.slice(0, end)
  return value.length >= 16 && /[0-9]/.test(value) && /[A-Za-z]/.test(value) && entropy(value) >= 3.3 ? end : 0
}

const AWS_SECRET_RUN = "(?<![A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"

const password = (description: string, pattern: RegExp, validate: NonNullable<RegexRule["validate"]>, hint?: string): RegexRule => ({
  entity_type: "password_assignment",
  library: "credentials",
  severity: "critical",
  description,
  pattern,
  group: 1,
  validate,
  ...(hint === undefined ? {} : { hint })
})

export const SECRET_RULES: ReadonlyArray<RegexRule> = [
  password(
    "Password assigned in configuration, an env file or a command line",
    new RegExp(`${WORD_START}${PASSWORD_WORD}["']?[ \\t]{0,24}(?:=>|:=|=)[ \\t]{0,4}${VALUE}`, "dgi"),
    assigned
  ),
  password("Password after a label or YAML/JSON key", new RegExp(`${WORD_START}${PASSWORD_WORD}["']?[ \\t]{0,4}:[ \\t]{0,4}${VALUE}`, "dgi"), labelled),
  password(
    "Password stated in prose (\"the password is ...\")",
    new RegExp(
      `\\b(?:${PASSWORD_WORD}|secret)s?${QUALIFIER}[ \\t]{1,3}(?:is now|is set to|is|was|will be|has been changed to|changed to|set to)(?:[ \\t]{0,2}:)?[ \\t]{1,3}("[^"\\r\\n]{1,128}"|'[^'\\r\\n]{1,128}'|[^\\s"']{1,128})`,
      "dgi"
    ),
    spoken
  ),
  password("Password after a bare key word (.netrc, --password x)", /(?<![A-Za-z])(?:password|passwd)[ \t]{1,3}([^\s"'<>]{6,128})/dgi, spoken),
  password("Password in quotes after a short key word (pw `x`, pass 'x')", /(?<![A-Za-z])(?:pw|pwd|pass|passwd|password)[ \t]{1,3}(`[^`\r\n]{4,128}`|"[^"\r\n]{4,128}"|'[^'\r\n]{4,128}')/dgi, spoken),
  password(
    "Password passed as the value of a secret-named constant (define('DB_PASSWORD', '…'))",
    /\(\s{0,3}['"][A-Za-z0-9_]{0,40}(?:PASSWORD|PASSWD|PASS|PWD|password|passwd|pwd)['"]\s{0,3},\s{0,3}('[^'\r\n]{1,128}'|"[^"\r\n]{1,128}")/dg,
    (match) => acceptable(match) && valueLike(match)
  ),
  password(
    "PIN, passcode or door, gate or alarm code stated in a message",
    /\b(?:pin|pin code|pincode|passcode|security code|access code|alarm code|gate code|door code|entry code|key ?safe(?: code)?|lock code|combination|combo|memorable word|c[oó]digo|code|codice|kod|pin-?code)\b[^\n\d]{0,24}?(?:\bis\b|\bwas\b|:|=|\bes\b|\best\b|\bist\b|\bto\b|\bstill\b)[ \t]{1,3}((?:[0-9][ -]?){3,7}[0-9](?:#| ?star| ?pound)?|(?-i:[A-Z]{4,20})(?![A-Za-z]))(?![0-9])/dgi,
    (_match, text, start) => !NOT_A_SECRET_CODE.test(text.slice(Math.max(0, start - 48), start))
  ),
  password(
    "Password given in another language or as a change (\"reset his password to …\", \"mot de passe … c'est …\")",
    /\b(?:password|passwort|kennwort|senha|contrase[ñn]a|mot de passe|wachtwoord|has[łl]o|parola d'ordine|lösenord|passord)\b[^\n]{0,40}?(?:\bto\b|\bis\b|\bist\b|\bes\b|\best\b|c'est|\bé\b|\bjest\b|:)[ \t]{1,3}("[^"\r\n]{1,64}"|'[^'\r\n]{1,64}'|[^\s"']{4,64})/dgi,
    spoken
  ),
  password(
    "Password written after a login as \"user / password\"",
    /(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,4}`?[ \t]{1,2}\/[ \t]{1,2}(`[^`\s]{4,64}`|[^\s`]{4,64})/dg,
    spoken,
    " / "
  ),
  password("Password given to -p on a command line", /(?<![\w-])-p[ \t]?("[^"\r\n]{1,128}"|'[^'\r\n]{1,128}'|[^\s"'-][^\s"']{0,127})/dg, dashP, "-p"),
  password(
    "Password in the user-info part of a URL",
    /:\/\/[^\s:/@]{0,64}:([^\s@/]{1,128})@/dg,
    (match) => !URL_PLACEHOLDER.test(match),
    "://"
  ),
  {
    entity_type: "aws_secret_key",
    library: "credentials",
    severity: "critical",
    description: "AWS secret access key next to its name",
    pattern: new RegExp(
      `(?<![A-Za-z])(?:aws[_ -]?secret(?:[_ -]?access)?(?:[_ -]?key)?|secret[_ -]?access[_ -]?key)[^\\n]{0,40}?${AWS_SECRET_RUN}`,
      "dgi"
    ),
    group: 1,
    validate: awsSecretShape
  },
  {
    entity_type: "aws_secret_key",
    library: "credentials",
    severity: "critical",
    description: "AWS secret access key next to its access key id",
    pattern: new RegExp(`\\b(?:AKIA|ASIA)[A-Z0-9]{16}\\b[^\\n]{0,60}?${AWS_SECRET_RUN}`, "dg"),
    group: 1,
    validate: awsSecretShape
  },
  {
    entity_type: "generic_secret",
    library: "credentials",
    severity: "critical",
    description: "High-entropy value stated after a key, token or secret in prose",
    pattern: new RegExp(
      `\\b(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|private[ _-]?key|access[ _-]?token|auth(?:orization)?[ _-]?token|token|client[ _-]?secret|secret)${QUALIFIER}[ \\t]{1,3}(?:is|was)(?:[ \\t]{0,2}:)?[ \\t]{1,3}["'\`]?([A-Za-z0-9+/_.~=-]{16,256})`,
      "dgi"
    ),
    group: 1,
    validate: randomToken
  }
]

/** Scan's assignments also fire on `password = req.body.password`: sanitize rejects code references there too. */
export const notCode = (value: string): boolean => quoted(value) || !CODE.test(value)
