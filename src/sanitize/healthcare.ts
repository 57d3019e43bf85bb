/**
 * Health detectors. Person-health data (diagnoses, ICD-10-CM codes, NPI, MRN; ./health.ts) is personal data in
 * every pack: outside hipaa it reports in the `pii` library (HEALTH_PII_DETECTORS), under hipaa in `healthcare`,
 * once. The hipaa pack adds medications and care providers.
 */
import { type Detector, type RegexRule, regexDetector } from "./detector.js"
import { clinicalNear, MEDICATION_DETECTOR, namesCondition, personHealthDetectors } from "./health.js"
import type { Library } from "./types.js"

const CLAUSE_WORDS = new Set(["and", "but", "on", "in", "at", "was", "were", "is", "since", "who", "which", "with", "for", "the", "by", "after", "to", "from"])

/** A diagnosis phrase ends before the first word that starts a new clause. */
const diagnosisLength = (value: string): number => {
  let length = 0
  for (const word of value.split(" ")) {
    if (length > 0 && CLAUSE_WORDS.has(word.toLowerCase())) break
    length += (length > 0 ? 1 : 0) + word.length
  }
  return length
}

/** The phrase after a trigger counts when it names a known condition, or when the trigger stands among clinical or personal words. */
const diagnosisAfterTrigger = (value: string, text: string, start: number): number => {
  const length = diagnosisLength(value)
  const phrase = value.slice(0, length)
  if (namesCondition(phrase)) return length
  return /^(?:diagnos|dx|present|admitted)/i.test(text.slice(Math.max(0, start - 24), start).trim().split(/\s+/).slice(-2).join(" ")) && clinicalNear(text, start) ? length : 0
}

const triggerRule = (library: Library): RegexRule => ({
  entity_type: "diagnosis",
  library,
  severity: "warning",
  description: "Diagnosis or condition named after a clinical phrase",
  pattern:
    /\b(?:diagnosed with|diagnosis(?: of)?:?|dx:|suffers from|suffering from|history of|treated for|presents with|presenting with|positive for|admitted for)\s{1,3}([A-Za-z0-9'-]{2,30}(?: [A-Za-z0-9'-]{1,30}){0,5})/dgi,
  group: 1,
  validate: diagnosisAfterTrigger
})

const PROVIDER: RegexRule = {
  entity_type: "healthcare_provider",
  library: "healthcare",
  severity: "warning",
  description: "Care provider (hospital, clinic, practice)",
  pattern:
    /\b(?:[A-Z][A-Za-z'&.-]{1,25} ){1,4}(?:Hospital|Clinic|Medical Center|Medical Centre|Health System|Healthcare|Health Center|Infirmary|Hospice|Pharmacy|Medical Group|Surgery Center|Pediatrics|Cardiology|Oncology)\b/g
}

/** Person-health detectors of the `pii` library (default, pci, legal packs); skipped when the pack runs `healthcare`. */
export const HEALTH_PII_DETECTORS: ReadonlyArray<Detector> = [...personHealthDetectors("pii"), regexDetector(triggerRule("pii"))]

export const HEALTHCARE_DETECTORS: ReadonlyArray<Detector> = [
  ...personHealthDetectors("healthcare"),
  regexDetector(triggerRule("healthcare")),
  MEDICATION_DETECTOR,
  regexDetector(PROVIDER)
]
