/**
 * Text sanitizing throughput: MB/s of `sanitizeText` per policy pack (redact mode) on a
 * realistic mixed corpus (the labelled texts of test/fixtures/sanitize/ repeated to ~1 MB), the
 * time of the largest accepted input (500,000 characters, mixed and adversarial), and a same-run
 * baseline: one `String.prototype.replace` of e-mail addresses over the same text.
 *
 *   node --import ./scripts/check-node.mjs --import tsx bench/sanitize.ts
 *
 * Then recall and precision per labelled type on the independent corpus (test/corpus/), default pack
 * and hipaa pack, its tuning part and its held-out tenth apart; the tuning part's misses go to
 * bench/tmp/sanitize-corpus-misses.txt, the held-out part's are never printed.
 *
 * The machine is shared and noisy: read the ratios. The last line is one JSON object.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type SanitizePolicy, sanitizeText } from "../src/sanitize/text.js"
import { type CorpusScore, formatScore, isHeldOut, loadCorpus, scoreCorpus, summarize } from "../test/support/sanitize-corpus.js"

const corpus: { cases: ReadonlyArray<{ text: string }> } = JSON.parse(readFileSync(join(import.meta.dirname, "../test/fixtures/sanitize/corpus.json"), "utf8"))
const filler =
  "The quarterly review covered onboarding, support tickets and the migration plan. Nothing in this paragraph is sensitive; it is the ordinary prose that surrounds the few entities a real document carries. "

/** Labelled texts interleaved with plain prose (about one sensitive text per 600 characters), up to `chars`. */
const mixed = (chars: number): string => {
  const parts: Array<string> = []
  let length = 0
  for (let i = 0; length < chars; i++) {
    const piece = `${corpus.cases[i % corpus.cases.length]!.text}\n${filler}${filler}\n`
    parts.push(piece)
    length += piece.length
  }
  return parts.join("").slice(0, chars)
}

const EMAIL = /[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}/g

/** Median of `runs` timings in ms. */
const time = (runs: number, work: () => unknown): number => {
  const samples: Array<number> = []
  let sink = 0
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    const out = work()
    samples.push(performance.now() - started)
    sink += typeof out === "string" ? out.length : 1
  }
  if (sink < 0) console.log(sink)
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]!
}

const main = () => {
  const text = mixed(1_000_000)
  const megabytes = Buffer.byteLength(text, "utf8") / 1_000_000
  const policies: ReadonlyArray<SanitizePolicy> = ["default", "hipaa", "pci", "legal"]
  // Warm up the detectors and the JIT.
  for (const policy of policies) sanitizeText(text.slice(0, 50_000), { policy, mode: "redact" })

  const baselineMs = time(9, () => text.replace(EMAIL, "[REDACTED_EMAIL_ADDRESS]"))
  const packs: Record<string, { ms: number; mb_per_s: number; over_baseline: number }> = {}
  for (const policy of policies) {
    const ms = time(5, () => sanitizeText(text, { policy, mode: "redact" }).clean)
    packs[policy] = { ms: Number(ms.toFixed(1)), mb_per_s: Number((megabytes / (ms / 1000)).toFixed(2)), over_baseline: Number((ms / baselineMs).toFixed(1)) }
    console.log(`${policy.padEnd(8)} ${packs[policy]!.mb_per_s.toFixed(2).padStart(7)} MB/s  (${ms.toFixed(1)} ms for ${megabytes.toFixed(2)} MB, ${packs[policy]!.over_baseline}x the e-mail replace)`)
  }
  console.log(`baseline: String.prototype.replace of e-mails, ${(megabytes / (baselineMs / 1000)).toFixed(1)} MB/s (${baselineMs.toFixed(1)} ms)`)

  const largest: Record<string, number> = {}
  const inputs: Record<string, string> = {
    mixed: mixed(500_000),
    digits_and_spaces: "1 ".repeat(250_000),
    capitalized_words: "Aa ".repeat(166_666),
    at_signs: "x@".repeat(250_000),
    jwt_prefixes: "eyJ".repeat(166_666)
  }
  for (const [name, input] of Object.entries(inputs)) {
    largest[name] = Number(time(3, () => sanitizeText(input, { policy: "hipaa", mode: "tokenize" }).clean).toFixed(1))
    console.log(`500,000 characters (${name}, hipaa, tokenize): ${largest[name]} ms`)
  }

  const independent = loadCorpus()
  const tuning = independent.filter((t) => !isHeldOut(t.id))
  const heldOut = independent.filter((t) => isHeldOut(t.id))
  const figures = (score: CorpusScore) => {
    const s = summarize(score)
    const round = (x: number) => Number(x.toFixed(3))
    return {
      texts: score.texts,
      recall: round(s.recall),
      precision: round(s.precision),
      decoys_changed: round(s.decoysChanged),
      injection_recall: round(s.injectionRecall),
      recall_by_type: Object.fromEntries(Object.entries(s.recallByType).map(([k, v]) => [k, round(v)]))
    }
  }
  const corpusFigures: Record<string, ReturnType<typeof figures>> = {}
  const misses: Array<string> = []
  for (const policy of ["default", "hipaa"] as const) {
    const tuned = scoreCorpus(tuning, policy)
    const held = scoreCorpus(heldOut, policy)
    console.log(`\n${formatScore(`corpus, ${policy} pack, tuning part`, tuned)}\n\n${formatScore(`corpus, ${policy} pack, held-out part`, held)}`)
    corpusFigures[`${policy}_tuning`] = figures(tuned)
    corpusFigures[`${policy}_held_out`] = figures(held)
    misses.push(`# ${policy} pack, tuning part`, ...tuned.misses)
  }
  mkdirSync(join(import.meta.dirname, "tmp"), { recursive: true })
  writeFileSync(join(import.meta.dirname, "tmp/sanitize-corpus-misses.txt"), `${misses.join("\n")}\n`)
  console.log("\n(tuning misses: bench/tmp/sanitize-corpus-misses.txt)")

  console.log(
    JSON.stringify({
      bench: "sanitize",
      corpus: corpusFigures,
      node: process.version,
      corpus_mb: Number(megabytes.toFixed(3)),
      packs,
      baseline_email_replace_mb_per_s: Number((megabytes / (baselineMs / 1000)).toFixed(2)),
      max_input_ms: largest
    })
  )
}

main()
