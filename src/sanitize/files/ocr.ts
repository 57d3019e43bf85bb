/**
 * OCR with word boxes through a pool of tesseract.js workers (one per core, created on first use
 * and kept). Recognition runs in worker threads, so the request loop stays free; the queue is
 * bounded (beyond it: `OcrBusy`) and each image has a time limit (`OcrTimeout`). The English data
 * comes from `@tesseract.js-data/eng` on disk: nothing is downloaded at run time.
 */
import { createRequire } from "node:module"
import { availableParallelism } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Scheduler } from "tesseract.js"
import { loadOnce } from "../../platform/lazy.js"
import { OcrBusy, OcrTimeout, OcrUnavailable } from "./reasons.js"

export interface OcrWord {
  text: string
  bbox: { x0: number; y0: number; x1: number; y1: number }
  /** 0..1 */
  confidence: number
}

export type Ocr = (image: Uint8Array /* PNG or JPEG bytes */) => Promise<{ text: string; words: OcrWord[] }>

export interface OcrPoolOptions {
  readonly workers?: number
  /** Images waiting beyond the ones being read; one more is refused with `OcrBusy`. */
  readonly queueLimit?: number
  /** Per image, from the moment it is queued. */
  readonly timeoutMs?: number
}

export interface OcrPool {
  readonly ocr: Ocr
  /** Images queued or being read. */
  readonly pending: () => number
  readonly close: () => Promise<void>
}

/** Loaded when the pool starts, at the first image to read. */
const loadTesseract = loadOnce(() => import("tesseract.js"))

const langPath = () => join(dirname(createRequire(import.meta.url).resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int")

/** Our wrapper of tesseract's worker script (lower thread priority); a file path, as tesseract spawns it. */
const workerPath = () => fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "./ocr-worker.ts" : "./ocr-worker.js", import.meta.url))

interface Line {
  readonly words: ReadonlyArray<{ text: string; confidence: number; bbox: OcrWord["bbox"] }>
}

/** The words in reading order, one line of text per OCR line, words separated by one space. */
export const layout = (lines: ReadonlyArray<Line>): { text: string; words: OcrWord[] } => {
  const words: OcrWord[] = []
  const text: string[] = []
  for (const line of lines) {
    const kept = line.words.filter((word) => word.text.trim() !== "")
    if (kept.length === 0) continue
    text.push(kept.map((word) => word.text.trim()).join(" "))
    for (const word of kept) words.push({ text: word.text.trim(), bbox: { ...word.bbox }, confidence: Math.max(0, Math.min(1, word.confidence / 100)) })
  }
  return { text: text.join("\n"), words }
}

/**
 * Tesseract's TSV: one row per element; level 5 rows are words with their box (left, top, width,
 * height), confidence 0-100 and text, grouped into lines by (block, paragraph, line).
 */
export const linesOfTsv = (tsv: string): Line[] => {
  const lines: Array<{ words: Array<Line["words"][number]> }> = []
  let key = ""
  for (const row of tsv.split("\n")) {
    const cells = row.split("\t")
    if (cells[0] !== "5" || cells.length < 12) continue
    const [, , block, paragraph, line, , left, top, width, height, confidence] = cells.map(Number) as number[]
    const text = cells.slice(11).join("\t")
    const here = `${block}/${paragraph}/${line}`
    if (here !== key || lines.length === 0) {
      lines.push({ words: [] })
      key = here
    }
    lines[lines.length - 1]!.words.push({ text, confidence: Math.max(0, confidence!), bbox: { x0: left!, y0: top!, x1: left! + width!, y1: top! + height! } })
  }
  return lines
}

/** Where each word sits in `text` (UTF-16 offsets), searching forward in order. */
export const wordOffsets = (text: string, words: ReadonlyArray<OcrWord>): Array<{ start: number; end: number }> => {
  let cursor = 0
  return words.map((word) => {
    const at = text.indexOf(word.text, cursor)
    if (at < 0) return { start: -1, end: -1 }
    cursor = at + word.text.length
    return { start: at, end: cursor }
  })
}

export const makeOcrPool = (options: OcrPoolOptions = {}): OcrPool => {
  const size = Math.max(1, options.workers ?? availableParallelism())
  const queueLimit = options.queueLimit ?? size * 8
  const timeoutMs = options.timeoutMs ?? 60_000
  let scheduler: Promise<Scheduler> | undefined
  let pending = 0

  const start = async (): Promise<Scheduler> => {
    const { createScheduler, createWorker } = await loadTesseract()
    const made = createScheduler()
    const workers = await Promise.all(
      Array.from({ length: size }, () => createWorker("eng", 1, { langPath: langPath(), gzip: true, cacheMethod: "none", workerPath: workerPath(), logger: () => {} }))
    )
    for (const worker of workers) {
      // Images carry no trustworthy DPI; a fixed one keeps tesseract from guessing (and warning).
      await worker.setParameters({ user_defined_dpi: "300" })
      made.addWorker(worker)
    }
    return made
  }

  const ocr: Ocr = async (image) => {
    // Those being read count too: `size` run at once, `queueLimit` wait.
    if (pending >= size + queueLimit) throw new OcrBusy(pending)
    pending++
    let timer: NodeJS.Timeout | undefined
    // A timed-out image still occupies its worker until tesseract finishes it, so it stays counted until then.
    let settled = false
    const release = () => {
      if (!settled) {
        settled = true
        pending--
      }
    }
    try {
      scheduler ??= start().catch((cause) => {
        scheduler = undefined
        throw new OcrUnavailable(`OCR workers did not start: ${(cause as Error)?.message ?? cause}`)
      })
      const ready = await scheduler
      // TSV is one string (cheap to pass back to this thread), unlike the nested block tree.
      const job = ready.addJob("recognize", Buffer.from(image), {}, { tsv: true, text: false, blocks: false, hocr: false } as never)
      job.then(release, release)
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new OcrTimeout(timeoutMs)), timeoutMs)
      })
      const result = await Promise.race([job, timeout])
      return layout(linesOfTsv(result.data.tsv ?? ""))
    } catch (cause) {
      // Before the job was queued (the pool failed to start) nothing else releases it.
      if (!(cause instanceof OcrTimeout)) release()
      throw cause
    } finally {
      if (timer) clearTimeout(timer)
    }
  }

  return {
    ocr,
    pending: () => pending,
    close: async () => {
      const running = scheduler
      scheduler = undefined
      if (running) await (await running).terminate()
    }
  }
}
