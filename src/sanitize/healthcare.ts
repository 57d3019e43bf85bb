/**
 * The `healthcare` library (HIPAA pack): medical record numbers, ICD-10 codes and diagnoses,
 * NPI numbers and care providers. Bare numbers and codes are too common to report on their
 * own, so every pattern here is anchored on a label in front of the value.
 */
import { type Detector, type RegexRule, regexDetector } from "./detector.js"
import { npiValid } from "./validators.js"

/** A record number carries at least one digit (so "MRN: pending" is not one). */
const hasDigit = (value: string): boolean => /[0-9]/.test(value)

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

const RULES: ReadonlyArray<RegexRule> = [
  {
    entity_type: "mrn_pattern",
    library: "healthcare",
    severity: "critical",
    description: "Medical record number next to its label",
    pattern:
      /\b(?:MRN|MR#|medical record(?: number| no\.?| #)?|patient (?:id|number|no\.?|#)|chart (?:number|no\.?|#)|record (?:number|no\.?|#))\s{0,3}[:#=-]?\s{0,3}([A-Z]{0,4}-?\d[A-Z0-9-]{3,15})\b/dgi,
    group: 1,
    validate: hasDigit
  },
  {
    entity_type: "icd10_code",
    library: "healthcare",
    severity: "warning",
    description: "ICD-10 diagnosis code next to a diagnosis label",
    pattern:
      /\b(?:ICD-?10(?:-CM)?|ICD|diagnosis code|dx code|dx|diagnosis|diag\.?)\s{0,3}(?:code)?\s{0,3}[:#=-]?\s{0,3}\(?([A-TV-Z][0-9][0-9AB](?:\.[0-9A-TV-Z]{1,4})?)\b/dgi,
    group: 1
  },
  {
    entity_type: "diagnosis",
    library: "healthcare",
    severity: "warning",
    description: "Diagnosis or condition named after a clinical phrase",
    pattern:
      /\b(?:diagnosed with|diagnosis(?: of)?:?|dx:|suffers from|suffering from|history of|treated for|presents with|presenting with|positive for|admitted for)\s{1,3}([A-Za-z0-9'-]{2,30}(?: [A-Za-z0-9'-]{1,30}){0,5})/dgi,
    group: 1,
    validate: diagnosisLength
  },
  {
    entity_type: "npi_number",
    library: "healthcare",
    severity: "warning",
    description: "US National Provider Identifier (Luhn-valid with prefix 80840)",
    hint: "NPI",
    pattern: /\bNPI(?: number| no\.?| #)?\s{0,3}[:#=-]?\s{0,3}(\d{10})\b/dg,
    group: 1,
    validate: npiValid
  },
  {
    entity_type: "healthcare_provider",
    library: "healthcare",
    severity: "warning",
    description: "Care provider (hospital, clinic, practice)",
    pattern:
      /\b(?:[A-Z][A-Za-z'&.-]{1,25} ){1,4}(?:Hospital|Clinic|Medical Center|Medical Centre|Health System|Healthcare|Health Center|Infirmary|Hospice|Pharmacy|Medical Group|Surgery Center|Pediatrics|Cardiology|Oncology)\b/g
  }
]

export const HEALTHCARE_DETECTORS: ReadonlyArray<Detector> = RULES.map(regexDetector)
