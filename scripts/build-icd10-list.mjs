// Builds src/sanitize/data/icd10cm-codes.txt, the ICD-10-CM code list the sanitizer validates codes against
// (issue 31). Not run in CI: it reads official CDC/CMS files placed by hand in one folder (default /tmp/icd/src):
//
//   icd10cm-order-Jan-2021.txt              CDC/NCHS ICD-10-CM order file, FY2021 with the January 2021 update:
//                                           every code, billable or header, 3 to 7 characters (public domain)
//   icd10cm-categories-April-1-2026.csv     the 1,918 three-character categories of the April 1, 2026 release,
//                                           one `CODE,description,...` row each (derived from the CDC tabular list)
//   2026-Initial-ICD-10-CM-Mappings.csv     CMS risk-adjustment model mappings, "ICD-10 codes valid in FY2024 and
//                                           FY2025" (the HCC-relevant part of those years' code sets; public domain)
//
//   node scripts/build-icd10-list.mjs [/tmp/icd/src]
//
// Output: `#` comment lines, then one line per three-character category, sorted: the category, then the rest of
// every longer code of that category (no dot), space-separated. "E11 0 00 01 ... 9" means E11, E11.0, E11.00, …
// A code is in the list when any source has it: codes deleted after 2021 stay (old records still carry them).
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const src = process.argv[2] ?? "/tmp/icd/src"
const out = new URL("../src/sanitize/data/icd10cm-codes.txt", import.meta.url)

const SHAPE = /^[A-Z][0-9][0-9A-Z][0-9A-Z]{0,4}$/
const codes = new Set()
const add = (raw) => {
  const code = raw.trim().toUpperCase().replace(".", "")
  if (SHAPE.test(code)) codes.add(code)
}

// Order file: fixed width, the code in columns 7-13.
for (const line of readFileSync(join(src, "icd10cm-order-Jan-2021.txt"), "latin1").split(/\r?\n/)) {
  if (line.length > 14) add(line.slice(6, 13))
}
const fromOrder = codes.size
for (const line of readFileSync(join(src, "icd10cm-categories-April-1-2026.csv"), "utf8").split(/\r?\n/).slice(1)) add(line.split(",")[0] ?? "")
const withCategories = codes.size
// The CMS mapping: a quoted multi-line header, then `CODE,description,...` rows.
for (const line of readFileSync(join(src, "2026-Initial-ICD-10-CM-Mappings.csv"), "utf8").split(/\r?\n/)) {
  const first = line.split(",")[0] ?? ""
  if (/^[A-Z][0-9][0-9A-Z][0-9A-Z]{0,4}$/.test(first)) add(first)
}

// A few codes added after FY2021 that no source above carries, from the CDC addenda: post COVID-19 condition
// (U09.9, FY2022), prolonged grief disorder (F43.81, FY2023), type 2 diabetes in remission (E11.A, FY2025).
for (const code of ["U09", "U099", "F4381", "E11A"]) add(code)

const byCategory = new Map()
for (const code of codes) {
  const category = code.slice(0, 3)
  if (!byCategory.has(category)) byCategory.set(category, [])
  if (code.length > 3) byCategory.get(category).push(code.slice(3))
}
const lines = [...byCategory.keys()].sort().map((category) => [category, ...byCategory.get(category).sort()].join(" "))
const header = [
  "# ICD-10-CM codes (no dots), one line per 3-character category: the category, then the rest of each longer code.",
  "# Source: CDC/NCHS ICD-10-CM order file FY2021 (Jan 2021) + April 2026 categories + CMS FY2024/FY2025 mappings; public domain.",
  "# Built by scripts/build-icd10-list.mjs; see src/sanitize/data/README.md."
]
writeFileSync(out, `${header.join("\n")}\n${lines.join("\n")}\n`)
console.log(`${codes.size} codes (${fromOrder} from the 2021 order file, ${withCategories - fromOrder} more categories of 2026, ${codes.size - withCategories} more from the CMS FY2024/2025 mappings), ${byCategory.size} categories`)
