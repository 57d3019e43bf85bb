/**
 * The `prompt_injection` library: instruction overrides, role-play jailbreaks and attempts to
 * pull out the system prompt. Phrases allow a few words of slack between their parts, each gap
 * bounded, so a match attempt costs a constant number of steps.
 */
import { type Detector, type RegexRule, regexDetector } from "./detector.js"

/** Up to `n` filler words between two parts of a phrase. */
const gap = (n: number): string => `(?:\\s{1,3}[\\w'’-]{1,20}){0,${n}}\\s{1,3}`

const PREVIOUS = "(?:previous|prior|preceding|above|earlier|all|any|your|the|original|initial|system)"
const INSTRUCTIONS = "(?:instructions?|prompts?|rules|directions|directives|guidelines|guardrails|constraints|restrictions|programming)"

const RULES: ReadonlyArray<RegexRule> = [
  {
    entity_type: "prompt_injection",
    library: "prompt_injection",
    severity: "critical",
    description: "Attempt to override earlier instructions",
    pattern: new RegExp(
      `\\b(?:ignore|disregard|forget|override|bypass|skip|drop|abandon)${gap(2)}${PREVIOUS}${gap(2)}${INSTRUCTIONS}\\b` +
        `|\\bnew instructions\\s{0,3}:|\\bfrom now on,?\\s{1,3}you (?:will|must|are)\\b|\\bdo not follow${gap(2)}${INSTRUCTIONS}\\b`,
      "gi"
    )
  },
  {
    entity_type: "jailbreak_roleplay",
    library: "prompt_injection",
    severity: "critical",
    description: "Role-play or persona jailbreak",
    pattern: new RegExp(
      "\\b(?:you are now|act as|pretend (?:to be|you are|you're)|roleplay as|role-play as|imagine you are)" +
        `${gap(3)}(?:dan|unrestricted|unfiltered|uncensored|jailbroken|evil|an? ai (?:with(?:out)?|that has no)\\s{1,3}(?:no )?(?:restrictions|limits|rules|filters))\\b` +
        "|\\b(?:do anything now|developer mode (?:enabled|on|activated)|jailbreak mode|dan mode|no (?:ethical|moral) (?:guidelines|restrictions|constraints))\\b",
      "gi"
    )
  },
  {
    entity_type: "system_prompt_extraction",
    library: "prompt_injection",
    severity: "critical",
    description: "Attempt to reveal the system prompt or hidden instructions",
    pattern: new RegExp(
      `\\b(?:reveal|show|print|repeat|output|display|tell|give|leak|dump|recite|write out)${gap(3)}(?:system|hidden|initial|secret|original|developer)\\s{1,3}(?:prompt|instructions|message|rules)\\b` +
        "|\\bwhat (?:is|are|was|were) your (?:system|hidden|initial|original) (?:prompt|instructions)\\b",
      "gi"
    )
  }
]

export const INJECTION_DETECTORS: ReadonlyArray<Detector> = RULES.map(regexDetector)
