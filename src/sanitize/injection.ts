/**
 * The `prompt_injection` library, in four families: instruction override, role-play/jailbreak,
 * exfiltration (system prompt, secrets, markdown-image beacons) and tool abuse. Patterns run on
 * a normalized reading view of the text (see injection-normalize.ts), on its rot13, and on
 * base64 fragments that decode to prose; hits map back to original offsets. Each finding's
 * family is its entity type and the start of its description ("<Family>: ..."), so the wire
 * finding keeps its shape. Gaps between a phrase's parts are bounded, so a match attempt costs
 * a constant number of steps.
 */
import type { Detector, Emit } from "./detector.js"
import { MAX_HITS_PER_DETECTOR } from "./detector.js"
import { base64Fragments, type ReadingView, ROT13_HINT, readingView, rot13 } from "./injection-normalize.js"

/** Up to `n` filler words between two parts of a phrase; empty when spelled-out letters were joined ("ignoreallprevious"). */
const gap = (n: number): string => `(?:(?:\\s{1,3}[\\w'’-]{1,20}){0,${n}}\\s{1,3}|)`

const PREVIOUS = "(?:previous|prior|preceding|above|earlier|all|any|your|the|original|initial|system)"
const INSTRUCTIONS = "(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|guidance|constraints|restrictions|programming)"
const SECRETS =
  "(?:conversation|chat\\s{1,3}(?:history|log|transcript)|system\\s{1,3}prompt|api\\s{0,3}keys?|credentials|secrets|passwords?|access\\s{1,3}tokens?|private\\s{1,3}keys?|ssh\\s{1,3}keys?|env(?:ironment)?\\s{1,3}variables|\\.env|session\\s{1,3}cookies?)" +
  // "password reset link", "API keys documentation": about the secret, not the secret.
  "(?!\\s{1,3}(?:reset|change|policy|policies|manager|hint|requirements?|rules|link|form|page|field|documentation|docs|guide|rotation|expiry)\\b)"
const DESTINATION = "(?:https?://[^\\s)\"'<>]{1,200}|[\\w.+-]{1,64}@[\\w-]{1,63}(?:\\.[\\w-]{1,63}){1,5})"
const DANGEROUS_TOOL = /(?:delete|drop|remove|wipe|destroy|purge|truncate|erase|transfer|exec|shell|grant|revoke|shutdown|kill|payout|withdraw)/
/** Query parameters and placeholders that carry data out through an image URL. */
const BEACON_QUERY = /[?&;](?:data|d|q|secret|key|token|conv|conversation|chat|history|prompt|password|pass|msg|message|content|info|payload|leak|exfil|c|s)=|[{$<[]|%7b/

/**
 * Text that speaks to the AI reading it ("Assistant: …", "Note to AI agents: …", "Hinweis an den
 * KI-Assistenten: …", "<!-- Claude/GPT: …", "[SYSTEM NOTE FOR ASSISTANT: …", "@helperbot"). An
 * instruction is not an attack, but one addressed to a model inside data it reads, asking for one of
 * the dangerous things below, is how injections are written; the view is lower-case and accent-free.
 */
const AI = "(?:ai|a\\.i\\.|llm|gpt|chatgpt|claude|copilot|gemini|chatbot|bot|assistant|assistants|agent|agents|model|ki|ia|asistente|asistentes|assistente|assistenti|ki-assistent(?:en)?|ki-agent(?:en)?|ki-system|assistant ia|agent ia|sistema de ia|systeme d'ia)"
/** After "note to", German compounds too ("Hinweis für automatische Buchhaltungsagenten"). */
const AI_OR_COMPOUND = `(?:${AI}|[a-z]{1,24}(?:agenten|assistenten|assistent))`
const ADDRESSEE =
  "(?:" +
  // "note to the assistant", "message for AI agents", "hinweis an den ki-assistenten", "nota para asistentes de ia"
  `\\b(?:note|message|instruction|instructions|notice|reminder|p\\.s\\.|ps|hinweis|nachricht|anweisung|nota|mensaje|instruccion|remarque|messaggio|istruzione)\\s{1,3}(?:to|for|an|fur|para|pour|per|a)\\s{1,3}(?:the\\s{1,3}|all\\s{1,3}|any\\s{1,3}|den\\s{1,3}|die\\s{1,3}|das\\s{1,3}|el\\s{1,3}|los\\s{1,3}|la\\s{1,3}|les\\s{1,3}|l'|gli\\s{1,3}|il\\s{1,3})?(?:[\\w/-]{1,20}\\s{1,3}){0,2}${AI_OR_COMPOUND}\\b` +
  // "Assistant:", "AI assistant processing this mailbox:", "claude/gpt/copilot:" (its last name), "assistant, ..."
  `|\\b${AI}(?:\\s{1,3}(?:reading|processing|summari[sz]ing|evaluating|reviewing|analy[sz]ing|auswertet)[^:\\n]{0,60})?\\s{0,2}[:,]` +
  // "[system note for assistant", "ai agents must", "to the ai", "the ai agent should"
  `|\\bsystem\\s{1,3}note\\b|\\b${AI}\\s{1,3}(?:must|should|shall|needs? to|is required to|has to)\\b|@[a-z0-9_-]{0,30}(?:bot|agent|assistant)\\b` +
  ")"
/** Up to 300 characters of the same paragraph. */
/** How far after the address the request may come: 200 characters of the same paragraph. */
const ADDRESS_REACH = 200
/** Between a request's verb and its object: 120 characters of the same paragraph. */
const WINDOW = "(?:[^\\n]|\\n(?!\\s*\\n)){0,120}?"

/** "please don't share passwords" asks for the opposite. */
const NOT_NEGATED = "(?<!\\b(?:don't|dont|do not|never|not|no)\\s{1,3})"
const OVERRIDE_ASK =
  "(?:\\b(?:ignore|disregard|forget|override|ignoriere|vergiss|missachte|olvida|ignora|oublie|ignorez|negeer|vergeet|zignoruj|ignorar)\\b|\\b(?:previous|prior|earlier|all|your)\\s{1,3}instructions\\s{1,3}(?:are|were|have been)\\s{1,3}(?:void|cancelled|canceled|revoked|null|obsolete|superseded|replaced)|\\bnew\\s{1,3}(?:policy|rule|instructions)\\b|\\bfrom now on\\b|\\bab (?:jetzt|sofort)\\b|\\ba partir de (?:ahora|maintenant)\\b|\\bd'ora in poi\\b)"
const ROLE_ASK =
  "(?:\\b(?:pretend|act as|roleplay|role-play|role play|play the role|fais semblant|tu joues le role|joue le role|finge|fingi|haz de cuenta|stell dir vor|spiele die rolle|tu sei ora|you are now)\\b)"
const EXFIL_ASK =
  `(?:${NOT_NEGATED}` +
  "\\b(?:send|forward|email|e-mail|post|upload|append|include|reveal|print|output|share|leak|list|paste|return|reply|respond|sende|schicke|gib|envia|envoie|invia|rivela|revele|revela|manda|comparte|inoltra)s?\\b" +
  WINDOW +
  "(?:\\.env\\b|os\\.environ\\b|\\b(?:system\\s{0,3}prompt|systemprompt|prompt (?:di|del) sistema|prompt systeme|conversations?|chat history|gesprachsverlauf|conversaciones|conversazioni|api\\s{0,2}keys?|keys|tokens|passwords?|passwort|credentials|zugangsdaten|secrets|chiavi|claves|environment|dates of birth|phone numbers|member list|user data|user's|patient|one-time codes|e-mails? in this mailbox)))"
const TOOL_ASK =
  `(?:${NOT_NEGATED}\\b(?:run|execute|exec|call|invoke|trigger|transfer|wire|delete|drop|cancel|refund|grant|remove|export|disable|publish|wipe|fuhre|ejecuta|usa la herramienta|cambia|supprime|loesche|losche|elimina|cancella|esegui|uberweisung|transfiere|transferir)\\b)`

/**
 * "Agent:" or "Assistant:" opening lines of a transcript names who speaks, not whom: a label that
 * opens two lines or more of the text is a speaker.
 */
const notSpeakerLabel = (m: RegExpExecArray): boolean => {
  const label = /^\s*([a-z][\w .'/-]{0,40}?)\s{0,2}:/.exec(m[0])
  if (label === null || !(m.index === 0 || m.input[m.index - 1] === "\n")) return true
  let lines = 0
  for (const line of m.input.split("\n")) if (line.trimStart().startsWith(`${label[1]}:`) && ++lines >= 2) return false
  return true
}

/** Function names that change state: what an attacker wants an agent to call. */
const ADMIN_CALL = /(?:^|_)(?:cancel|delete|drop|remove|update|set|grant|issue|refund|transfer|export|approve|pay|mark|change|escalate|disable|close|wipe|purge|reset|promote|add_admin|make_admin)(?:_|$)/

interface Rule {
  readonly pattern: RegExp
  /** false rejects a match. */
  readonly accept?: (match: RegExpExecArray) => boolean
}

interface Family {
  readonly entity_type: string
  readonly description: string
  readonly rules: ReadonlyArray<Rule>
  /** What this family asks for when the text speaks to the AI reading it (see ADDRESSEE). */
  readonly ask?: string
}

const rx = (source: string): RegExp => new RegExp(source, "g")

const FAMILIES: ReadonlyArray<Family> = [
  {
    entity_type: "prompt_injection",
    ask: OVERRIDE_ASK,
    description: "Instruction override: attempt to override earlier instructions",
    rules: [
      { pattern: rx(`\\b(?:ignore|disregard|forget|override|bypass|neglect)${gap(2)}${PREVIOUS}${gap(2)}${INSTRUCTIONS}\\b`) },
      { pattern: rx("\\b(?:forget|disregard|ignore)\\s{1,3}(?:everything|all)(?:\\s{1,3}(?:that\\s{1,3})?you\\s{1,3}(?:were|have\\s{1,3}been|was)\\s{1,3}(?:told|given|taught)|\\s{1,3}(?:above|before|previously|earlier|so\\s{1,3}far))") },
      { pattern: rx("\\b(?:new|updated|revised|real|actual)\\s{1,3}(?:system\\s{1,3})?instructions\\s{0,3}:|(?<!\\b(?:our|the|my|your|a|this|their|its)\\s{1,3})\\bsystem\\s{0,3}prompt\\s{0,3}:|<\\|im_start\\|>\\s{0,3}system\\b|<<sys>>|\\bsystem\\s{1,3}override\\b") },
      // Spelled-out letters joined without word gaps ("i g n o r e a l l p r e v i o u s ...").
      { pattern: rx("\\b(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your)?(?:previous|prior|above|earlier|preceding|original)?(?:instructions?|rules|prompts?|directives|guidelines)\\b") },
      { pattern: rx(`\\bfrom now on,?\\s{1,3}you (?:will|must|are)\\b|\\bdo not follow${gap(2)}${INSTRUCTIONS}\\b`) },
      { pattern: rx("\\b(?:previous|prior|earlier|all|your)\\s{1,3}instructions\\s{1,3}(?:are|were|have been)\\s{1,3}(?:void|cancelled|canceled|revoked|null|obsolete|superseded|replaced)\\b") },
      // German, Spanish, French, Italian, Dutch, Polish, Portuguese: "ignore all previous instructions".
      {
        pattern: rx(
          `\\b(?:ignoriere|vergiss|missachte|olvida|ignora|oublie|ignorez|oubliez|negeer|vergeet|zignoruj|ignorar|esqueca)${gap(3)}(?:anweisungen|vorgaben|regeln|instrucciones|reglas|instructions|consignes|istruzioni|regole|instructies|regels|instrukcje|polecenia|instrucoes)\\b`
        )
      },
    ]
  },
  {
    entity_type: "jailbreak_roleplay",
    ask: ROLE_ASK,
    description: "Role-play / jailbreak: persona or mode meant to drop the model's rules",
    rules: [
      {
        pattern: rx(
          "\\b(?:you are now|you're now|act as|pretend (?:to be|you are|you're)|roleplay as|role-play as|imagine you are)" +
            `${gap(3)}(?:dan|unrestricted|unfiltered|uncensored|jailbroken|evil|an? ai (?:with(?:out)?|that has no)\\s{1,3}(?:no )?(?:restrictions|limits|rules|filters))\\b`
        )
      },
      { pattern: rx("\\b(?:youarenow|actas|pretendyouare|pretendtobe)(?:an?)?(?:dan|unrestricted|unfiltered|uncensored|jailbroken)\\b") },
      { pattern: rx("\\b(?:do anything now|jailbreak mode|dan mode|no (?:ethical|moral) (?:guidelines|restrictions|constraints))\\b") },
      { pattern: rx("\\b(?:developer|dan|god) mode (?:enabled|activated|output)\\b|\\bdeveloper mode on(?=\\s{0,3}(?:[.!:;)\\]]|$))") },
      { pattern: rx("\\b(?:you are|you're)(?:\\s{1,3}now)?\\s{1,3}(?:in|running in|operating in)\\s{1,3}(?:developer|dev|god|jailbreak|dan|unrestricted)\\s{1,3}mode\\b") },
      { pattern: rx("\\byou (?:have|has) no\\s{1,3}(?:content\\s{1,3}polic(?:y|ies)|restrictions|filters|limits|guidelines|rules|ethics|morals|censorship)\\b|\\bno content\\s{1,3}(?:policy|policies|filters)\\b") },
      { pattern: rx("\\b(?:you are|you're)\\s{1,3}an?\\s{1,3}(?:unrestricted|unfiltered|uncensored|jailbroken)\\s{1,3}(?:ai|assistant|model|chatbot|llm)\\b") },
      { pattern: rx("\\b(?:you are|you're)\\s{1,3}(?:now\\s{1,3})?an?\\s{1,3}(?:ai|assistant|model|chatbot|llm)\\s{1,3}(?:with\\s{1,3}no|without(?:\\s{1,3}any)?)\\s{1,3}(?:restrictions|rules|limits|filters|guidelines|censorship)\\b") },
      // A persona, then "no restrictions / no rules / no filters" in the same breath, in several languages.
      {
        pattern: rx(
          "\\b(?:pretend|act as|roleplay|role-play|role play|play the role|let's roleplay|you are now|you're now|imagine you are|fais semblant|tu joues|joue le role|finge|fingi|stell dir vor|spiele|tu sei ora|a partir de ahora|a partir de maintenant)\\b" +
            "[^\\n]{0,120}?\\b(?:with\\s{1,3}no|without(?:\\s{1,3}any)?|no|sin|sans(?:\\s{1,3}aucune?)?|ohne|senza|zonder|bez)\\s{1,3}(?:[\\w-]{1,20}\\s{1,3}){0,2}(?:restrictions?|rules|limits|filters|guidelines|censorship|safety|ethics|restricciones|reglas|regles|einschrankungen|regeln|filter|restrizioni|regole|beperkingen|ograniczen)\\b"
        )
      },
    ]
  },
  {
    entity_type: "system_prompt_extraction",
    description: "Exfiltration: attempt to reveal the system prompt or hidden instructions",
    rules: [
      {
        pattern: rx(
          `\\b(?:reveal|show|print|repeat|output|display|tell|give|leak|dump|recite|write out)${gap(3)}(?:system|hidden|initial|secret|original|developer)\\s{1,3}(?:prompt|instructions|message|rules)\\b` +
            "|\\bwhat (?:is|are|was|were) your (?:system|hidden|initial|original) (?:prompt|instructions)\\b"
        )
      },
      { pattern: rx("\\b(?:reveal|print|show|repeat|output|display|dump)(?:your|the)?(?:system|hidden|initial|secret)(?:prompt|instructions)\\b") },
      { pattern: rx("\\brepeat\\s{1,3}(?:everything|all|the\\s{1,3}(?:text|words|lines|messages?))\\s{1,3}(?:above|before|prior)\\b") },
      {
        pattern: rx(
          `\\b(?:print|reveal|show|repeat|output|display|tell me|give me|list|dump|leak|write out)${gap(3)}(?:instructions|prompt|rules|guidelines)\\s{1,3}you\\s{1,3}(?:were|have\\s{1,3}been|got)\\s{1,3}(?:given|told|provided)\\b`
        )
      }
    ]
  },
  {
    entity_type: "data_exfiltration",
    ask: EXFIL_ASK,
    description: "Exfiltration: attempt to send conversation data or secrets to an outside address",
    rules: [
      { pattern: rx(`\\b(?:send|forward|post|upload|email|e-mail|mail|transmit|exfiltrate|leak|submit)${gap(5)}${SECRETS}${gap(8)}to\\s{1,3}${DESTINATION}`) },
      // A markdown image the client renders fetches its URL: data in the query leaves with it.
      { pattern: rx("!\\[[^\\]\\n]{0,200}\\]\\(\\s{0,3}https?://[^\\s)]{1,600}\\)"), accept: (m) => BEACON_QUERY.test(m[0].slice(m[0].indexOf("]("))) }
    ]
  },
  {
    entity_type: "tool_abuse",
    ask: TOOL_ASK,
    description: "Tool abuse: attempt to make the agent run a destructive tool or shell command",
    rules: [
      {
        pattern: rx("\\b(?:call|invoke|use|run|trigger|execute|exec)\\s{1,3}(?:the\\s{1,3}|your\\s{1,3})?`?([a-z0-9_.-]{1,60})`?(\\s{1,3}(?:tool|function|action|endpoint|command)\\b)?"),
        accept: (m) => m[2] !== undefined && DANGEROUS_TOOL.test(m[1]!)
      },
      { pattern: rx("\\brm\\s{1,3}-(?:rf|fr|r\\s{1,3}-f|f\\s{1,3}-r)\\s{1,3}(?:--no-preserve-root\\s{1,3})?(?:/(?:\\*|etc|home|usr|var|root|boot|bin)?(?![\\w.-])|~|\\$home|\\*)") },
      // A function call with an administrative verb in its name: "call issue_refund(...)", "run cancel_all_appointments(...)".
      {
        pattern: rx("\\b(?:call|invoke|run|execute|trigger|use)\\s{1,3}(?:the\\s{1,3}|your\\s{1,3})?(?:admin\\s{1,3})?(?:tool|function|command|action)?\\s{0,3}`?((?:[a-z0-9]{1,20}_){0,4}[a-z0-9]{1,30})`?\\s{0,2}(?:\\(|with\\s{1,3}\\{)"),
        accept: (m) => ADMIN_CALL.test(m[1]!)
      },
      { pattern: rx("\\b(?:use|using)\\s{1,3}(?:your|the)\\s{1,3}(?:[\\w-]{1,20}\\s{1,3}){0,2}tools?\\s{1,3}to:?\\s{1,3}(?:transfer|delete|change|remove|grant|give|export|pay|send|refund|cancel|wipe|drop)") },
      {
        pattern: rx("\\b(?:run|execute|call|invoke)\\s{1,3}(?:the\\s{1,3})?(?:command|function|tool)\\s{1,3}[\"'`]?((?:[a-z0-9]{1,20}_){0,4}[a-z0-9]{1,30})"),
        accept: (m) => ADMIN_CALL.test(m[1]!)
      },
      { pattern: rx("\\b(?:open|in)\\s{1,3}(?:a|the|your|the user's)\\s{1,3}terminal\\b[^\\n]{0,40}?\\b(?:and\\s{1,3})?(?:run|execute)\\b") },
      { pattern: rx("\\b(?:run|execute)\\b[^\\n]{0,80}?(?:\\|\\s{0,2}(?:sudo\\s{1,3})?(?:ba|z)?sh\\b|\\bkubectl\\s{1,3}delete\\b|\\bdrop\\s{1,3}(?:table|database)\\b|\\bgit\\s{1,3}push\\s{1,3}--force\\b)") },
      {
        pattern: rx(
          "\\b(?:execute|run)\\s{1,3}(?:the\\s{1,3})?(?:following|this|these|below)\\s{1,3}(?:shell|bash|terminal|system|powershell|cmd)\\s{1,3}commands?\\b" +
            "|\\b(?:execute|run)\\s{1,3}(?:the\\s{1,3})?(?:following|this|these)\\s{1,3}commands?\\s{1,3}without\\s{1,3}(?:asking|confirmation|confirming|telling)\\b"
        )
      }
    ]
  }
]

interface Scan {
  readonly source: string
  /** Hits per entity type, original offsets, sorted and merged. */
  readonly hits: ReadonlyMap<string, ReadonlyArray<readonly [number, number]>>
}

let memo: Scan | undefined

/** Drops the remembered text: the engine calls it after each scan, so no content outlives a request. */
export const forgetInjectionScan = (): void => {
  memo = undefined
}

const matchesIn = (text: string, rule: Rule, found: (start: number, end: number) => void): void => {
  const pattern = new RegExp(rule.pattern.source, rule.pattern.flags)
  let count = 0
  let m: RegExpExecArray | null
  while ((m = pattern.exec(text)) !== null) {
    if (m[0].length === 0) {
      pattern.lastIndex++
      continue
    }
    if (rule.accept !== undefined && !rule.accept(m)) {
      // Retry from the next character: a rejected long match may hide a shorter one inside.
      pattern.lastIndex = m.index + 1
      continue
    }
    found(m.index, m.index + m[0].length)
    if (++count >= MAX_HITS_PER_DETECTOR) return
  }
}

const merge = (spans: Array<[number, number]>): Array<readonly [number, number]> => {
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1])
  const out: Array<[number, number]> = []
  for (const s of spans) {
    const last = out[out.length - 1]
    if (last !== undefined && s[0] < last[1]) last[1] = Math.max(last[1], s[1])
    else out.push([s[0], s[1]])
  }
  return out
}

const ADDRESSEE_PATTERN = new RegExp(ADDRESSEE, "g")
const ASKS: ReadonlyArray<readonly [string, RegExp]> = FAMILIES.flatMap((f) => (f.ask === undefined ? [] : [[f.entity_type, new RegExp(f.ask)] as const]))

/**
 * Requests addressed to the AI: each address is found once, then the rest of its paragraph (up to
 * ADDRESS_REACH characters) is searched for each family's request. One pass, however many families.
 */
const addressedIn = (text: string, found: (entityType: string, start: number, end: number) => void): void => {
  const address = new RegExp(ADDRESSEE_PATTERN.source, ADDRESSEE_PATTERN.flags)
  let count = 0
  for (let m = address.exec(text); m !== null; m = address.exec(text)) {
    if (m[0].length === 0) {
      address.lastIndex++
      continue
    }
    if (!notSpeakerLabel(m)) continue
    const from = m.index + m[0].length
    let to = Math.min(text.length, from + ADDRESS_REACH)
    const paragraph = text.indexOf("\n\n", from)
    if (paragraph !== -1 && paragraph < to) to = paragraph
    const reach = text.slice(from, to)
    for (const [entityType, ask] of ASKS) {
      const hit = ask.exec(reach)
      if (hit !== null) found(entityType, m.index, from + hit.index + hit[0].length)
    }
    if (++count >= MAX_HITS_PER_DETECTOR) return
  }
}

const scan = (source: string): Scan => {
  if (memo !== undefined && memo.source === source) return memo
  // Escapes inside JSON strings ("…\\n\\nHinweis…") separate words like the characters they stand for;
  // two spaces for two characters keep every offset.
  const view: ReadingView = readingView(source.includes("\\") ? source.replace(/\\[nrt"]/g, "  ") : source)
  const rotated = ROT13_HINT.test(view.text) ? rot13(view.text) : ""
  const fragments = base64Fragments(source).map((f) => ({ ...f, text: readingView(f.decoded).text }))
  const hits = new Map<string, ReadonlyArray<readonly [number, number]>>()
  const addressed = new Map<string, Array<[number, number]>>()
  const addressedSpan = (entityType: string, span: [number, number]) => {
    const list = addressed.get(entityType)
    if (list === undefined) addressed.set(entityType, [span])
    else list.push(span)
  }
  const mapped = (entityType: string, start: number, end: number) => addressedSpan(entityType, [view.starts[start]!, view.ends[end - 1]!])
  addressedIn(view.text, mapped)
  if (rotated !== "") addressedIn(rotated, mapped)
  for (const f of fragments) addressedIn(f.text, (entityType) => addressedSpan(entityType, [f.start, f.end]))
  for (const family of FAMILIES) {
    const spans: Array<[number, number]> = [...(addressed.get(family.entity_type) ?? [])]
    const fromView = (start: number, end: number) => spans.push([view.starts[start]!, view.ends[end - 1]!])
    for (const rule of family.rules) {
      matchesIn(view.text, rule, fromView)
      if (rotated !== "") matchesIn(rotated, rule, fromView)
      for (const f of fragments) {
        let hit = false
        matchesIn(f.text, rule, () => {
          hit = true
        })
        if (hit) spans.push([f.start, f.end])
      }
    }
    hits.set(family.entity_type, merge(spans))
  }
  memo = { source, hits }
  return memo
}

const familyDetector = (family: Family): Detector => ({
  entity_type: family.entity_type,
  library: "prompt_injection",
  severity: "critical",
  description: family.description,
  run: (text: string, emit: Emit) => {
    for (const [start, end] of scan(text).hits.get(family.entity_type) ?? []) if (!emit(start, end)) return
  }
})

export const INJECTION_DETECTORS: ReadonlyArray<Detector> = FAMILIES.map(familyDetector)
