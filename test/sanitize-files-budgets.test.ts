/**
 * The decoding budgets' parts on their own, with property tests: image headers read without
 * decoding (against what sharp reads of images it wrote, and against random bytes), the decode
 * semaphore, the worker pool when a worker dies, and the DICOM structure check.
 */
import { deflateRawSync } from "node:zlib"
import fc from "fast-check"
import sharp from "sharp"
import { afterAll, describe, expect, it } from "vitest"
import { encodeBmp } from "../src/sanitize/files/bmp.js"
import { MAX_DICOM_ELEMENTS, MAX_INFLATED_BYTES, MAX_NESTING_DEPTH } from "../src/sanitize/files/budgets.js"
import { makeDecodeBudget } from "../src/sanitize/files/decode-budget.js"
import { checkDicomStructure } from "../src/sanitize/files/dicom-scan.js"
import { CorruptFile, LimitExceeded } from "../src/sanitize/files/errors.js"
import { bmpHeader, declaredImage, gifHeader, jpegHeader, pngHeader } from "../src/sanitize/files/headers.js"
import { DecodeBusy } from "../src/sanitize/files/reasons.js"
import { makeWorkerPool } from "../src/sanitize/files/worker-pool.js"
import { deflateBombDicom, dicomElement, dicomFile, dicomImage, hugeGif, hugeJpeg, hugeTiff, nestedSequenceDicom, pngStart } from "./support/hostile-files.js"

const side = fc.integer({ min: 1, max: 300 })

describe("image headers", () => {
  it("read the size an encoder wrote, as sharp reads it back", async () => {
    await fc.assert(
      fc.asyncProperty(side, side, fc.constantFrom("png", "jpeg", "gif", "tiff") as fc.Arbitrary<"png" | "jpeg" | "gif" | "tiff">, async (width, height, type) => {
        const bytes = await sharp({ create: { width, height, channels: 3, background: { r: 200, g: 10, b: 10 } } })
          .toFormat(type)
          .toBuffer()
        const meta = await sharp(bytes).metadata()
        const declared = await declaredImage(bytes, type)
        expect([declared.width, declared.height]).toEqual([meta.width, meta.height])
      }),
      { numRuns: 40 }
    )
  })

  it("read BMP sizes from both header kinds, top-down rows included", () => {
    fc.assert(
      fc.property(side, side, fc.boolean(), (width, height, topDown) => {
        const bmp = encodeBmp(width, height, new Uint8Array(width * height * 3), 3)
        if (topDown) new DataView(bmp.buffer, bmp.byteOffset).setInt32(22, -height, true)
        const declared = bmpHeader(bmp)
        // The 12-byte core header of OS/2 bitmaps: 16-bit sizes at 18 and 20.
        const core = Buffer.alloc(26)
        core.write("BM", 0, "latin1")
        core.writeUInt32LE(12, 14)
        core.writeUInt16LE(width, 18)
        core.writeUInt16LE(height, 20)
        return declared.width === width && declared.height === height && bmpHeader(core).width === width && bmpHeader(core).height === height
      })
    )
  })

  it("read any declared 16- or 32-bit size without decoding a pixel", async () => {
    const wide = fc.integer({ min: 1, max: 65_535 })
    fc.assert(
      fc.property(wide, wide, (width, height) => {
        const png = pngHeader(pngStart(width, height, 16, 6))
        const jpeg = jpegHeader(hugeJpeg(width, height))
        const gif = gifHeader(hugeGif(width, height))
        return (
          [png, jpeg, gif].every((d) => d.width === width && d.height === height) &&
          png.channels === 4 &&
          png.bytesPerSample === 2 &&
          jpeg.channels === 3
        )
      })
    )
    const tiff = await declaredImage(hugeTiff(100_000, 90_000), "tiff")
    expect([tiff.width, tiff.height]).toEqual([100_000, 90_000])
  })

  it("answer a size or CorruptFile for any bytes after the magic number, nothing else", async () => {
    const magic: Record<"png" | "jpeg" | "gif" | "bmp", number[]> = {
      png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
      jpeg: [0xff, 0xd8, 0xff],
      gif: [...Buffer.from("GIF89a")],
      bmp: [0x42, 0x4d]
    }
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("png", "jpeg", "gif", "bmp") as fc.Arbitrary<keyof typeof magic>, fc.uint8Array({ maxLength: 64 }), async (type, rest) => {
        try {
          const declared = await declaredImage(new Uint8Array([...magic[type], ...rest]), type)
          return Number.isSafeInteger(declared.width) && declared.width > 0 && Number.isSafeInteger(declared.height) && declared.height > 0
        } catch (error) {
          return error instanceof CorruptFile
        }
      }),
      { numRuns: 400 }
    )
  })
})

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("the decode semaphore", () => {
  it("never holds more than its capacity, lets jobs in first come first served, and runs a job larger than itself alone", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ estimate: fc.integer({ min: 1, max: 250 }), ms: fc.integer({ min: 0, max: 4 }) }), { minLength: 1, maxLength: 25 }), async (jobs) => {
        const budget = makeDecodeBudget(100, 1_000)
        let held = 0
        let most = 0
        const started: number[] = []
        await Promise.all(
          jobs.map((job, index) =>
            budget.run(job.estimate, async () => {
              started.push(index)
              held += Math.min(job.estimate, 100)
              most = Math.max(most, held)
              await later(job.ms)
              held -= Math.min(job.estimate, 100)
            })
          )
        )
        expect(most).toBeLessThanOrEqual(100)
        expect(started).toEqual(jobs.map((_, index) => index))
        expect([budget.inFlight(), budget.waiting()]).toEqual([0, 0])
      }),
      { numRuns: 60 }
    )
  })

  it("refuses a job as busy once its queue is full, and lets the others through", async () => {
    const budget = makeDecodeBudget(10, 1)
    let release = () => {}
    const holding = budget.run(10, () => new Promise<void>((resolve) => (release = resolve)))
    await later(0)
    const waiting = budget.run(5, async () => "ran")
    await expect(budget.run(5, async () => "never")).rejects.toBeInstanceOf(DecodeBusy)
    release()
    await holding
    await expect(waiting).resolves.toBe("ran")
  })
})

describe("the worker pool", () => {
  const pool = makeWorkerPool({ script: new URL("./support/greedy-worker.ts", import.meta.url), size: 1, resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 }, jobTimeoutMs: 60_000 })
  afterAll(() => pool.stop())

  it("refuses the job whose worker died as too complex, replaces the worker, and the next job runs", async () => {
    const hog = pool.run({ op: "hog", payload: null })
    // Queued behind the hog on the pool's one worker: it must not share the hog's fate.
    const next = pool.run<string>({ op: "echo", payload: "still here" })
    // The maximum named is the heap the worker had: its old generation (32 MB) and young one.
    const death = (await hog.catch((error: unknown) => error)) as LimitExceeded
    expect(death).toBeInstanceOf(LimitExceeded)
    expect(death).toMatchObject({ limit: "decoder_memory_mb" })
    expect(death.maximum).toBeGreaterThanOrEqual(32)
    await expect(next).resolves.toBe("still here")
    expect(pool.size()).toBe(1)
  }, 60_000)

  it("reports a budget, a corrupt file and a failure of ours each as itself; a job may ask the main thread", async () => {
    await expect(pool.run({ op: "limit", payload: null })).rejects.toMatchObject({ limit: "pages", maximum: 7 })
    await expect(pool.run({ op: "corrupt", payload: null })).rejects.toBeInstanceOf(CorruptFile)
    const failure = await pool.run({ op: "fail", payload: null }).catch((error: Error) => error)
    expect(failure).not.toBeInstanceOf(CorruptFile)
    expect(failure).not.toBeInstanceOf(LimitExceeded)
    const asked = await pool.run({ op: "ask", payload: 20, onCall: async (n) => (n as number) * 2 + 2 })
    expect(asked).toEqual({ asked: 20, answer: 42 })
  })

  it("stops a job that computes past its time limit, without counting the time its calls to the main thread take", async () => {
    const timed = makeWorkerPool({ script: new URL("./support/greedy-worker.ts", import.meta.url), size: 1, resourceLimits: {}, jobTimeoutMs: 1_500 })
    try {
      // Warm the worker first: its start-up is not part of a job.
      await expect(timed.run({ op: "echo", payload: "up" })).resolves.toBe("up")
      const loop = timed.run({ op: "spin", payload: null })
      // Queued behind the loop on the pool's one worker: it runs once the loop is stopped.
      const next = timed.run<string>({ op: "echo", payload: "after the loop" })
      await expect(loop).rejects.toMatchObject({ limit: "decoder_seconds", maximum: 2 })
      await expect(next).resolves.toBe("after the loop")
      const slowAnswer = await timed.run({ op: "ask", payload: 1, onCall: () => new Promise((resolve) => setTimeout(() => resolve(2), 2_500)) })
      expect(slowAnswer).toEqual({ asked: 1, answer: 2 })
    } finally {
      await timed.stop()
    }
  }, 60_000)

  it("a worker that cannot start is our failure, not the file's", async () => {
    const broken = makeWorkerPool({ script: new URL("./support/no-such-worker.ts", import.meta.url), size: 1, resourceLimits: {}, jobTimeoutMs: 60_000 })
    const failure = await broken.run({ op: "echo", payload: 1 }).catch((error: Error) => error)
    expect(failure).toBeInstanceOf(Error)
    expect(failure).not.toBeInstanceOf(LimitExceeded)
    await broken.stop()
  })
})

const text = (group: number, element: number, value: string) => dicomElement(group, element, "LO", Buffer.from(value.length % 2 ? `${value} ` : value, "latin1"))

describe("the DICOM structure check", () => {
  const value = fc.stringMatching(/^[A-Z0-9 ^]{0,40}$/)

  it("passes honest files, and refuses any one length that reaches past the end", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(value, { minLength: 1, maxLength: 30 }), fc.nat(), fc.integer({ min: 1, max: 0xfff0 }), async (values, pick, excess) => {
        const elements = values.map((v, i) => text(0x0010, 0x1000 + i, v))
        await expect(checkDicomStructure(dicomFile(elements))).resolves.toEqual({})
        // The chosen element claims `excess` bytes more than remain after it.
        const at = pick % elements.length
        const remaining = elements.slice(at + 1).reduce((sum, e) => sum + e.length, 0)
        const honest = elements[at]!
        const lying = Buffer.from(honest)
        lying.writeUInt16LE(Math.min(0xffff, honest.length - 8 + remaining + excess), 6)
        elements[at] = lying
        await expect(checkDicomStructure(dicomFile(elements))).rejects.toBeInstanceOf(CorruptFile)
      }),
      { numRuns: 150 }
    )
  })

  it("answers the image size the top-level dataset declares, whatever the frames hold", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 65_535 }), fc.integer({ min: 1, max: 65_535 }), fc.integer({ min: 1, max: 3000 }), async (rows, columns, frames) => {
        const declared = await checkDicomStructure(dicomFile([...dicomImage(rows, columns, frames), dicomElement(0x7fe0, 0x10, "OB", Buffer.alloc(16))]))
        expect(declared).toEqual({ rows, columns, samples: 1, ...(frames > 1 ? { frames } : {}) })
      })
    )
  })

  it(`sequences nest at most ${MAX_NESTING_DEPTH} deep`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 * MAX_NESTING_DEPTH }), async (depth) => {
        const check = checkDicomStructure(nestedSequenceDicom(depth))
        if (depth <= MAX_NESTING_DEPTH) await expect(check).resolves.toEqual({})
        else await expect(check).rejects.toBeInstanceOf(LimitExceeded)
      })
    )
  })

  it("any bytes after the preamble: passes, or CorruptFile, or a budget, nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (rest) => {
        try {
          await checkDicomStructure(Buffer.concat([Buffer.alloc(128), Buffer.from("DICM"), rest]))
          return true
        } catch (error) {
          return error instanceof CorruptFile || error instanceof LimitExceeded
        }
      }),
      { numRuns: 500 }
    )
  })

  it(`at most ${MAX_DICOM_ELEMENTS} elements, and a deflated dataset inflates to at most ${MAX_INFLATED_BYTES / 1024 / 1024} MB`, async () => {
    const many = Array.from({ length: MAX_DICOM_ELEMENTS + 1 }, (_, i) => dicomElement(0x0011, i % 0xffff, "LO", Buffer.alloc(0)))
    await expect(checkDicomStructure(dicomFile(many))).rejects.toBeInstanceOf(LimitExceeded)
    await expect(checkDicomStructure(dicomFile(many.slice(0, 1000)))).resolves.toEqual({})
    await expect(checkDicomStructure(deflateBombDicom(MAX_INFLATED_BYTES + 1024 * 1024))).rejects.toMatchObject({ limit: "decoder_memory_mb" })
    // Under the ceiling, a deflated dataset is walked like any other.
    const dataset = Buffer.concat([...dicomImage(30, 40), dicomElement(0x7fe0, 0x10, "OB", Buffer.alloc(1200))])
    const deflated = Buffer.concat([dicomFile([], "1.2.840.10008.1.2.1.99"), deflateRawSync(dataset)])
    await expect(checkDicomStructure(deflated)).resolves.toEqual({ rows: 30, columns: 40, samples: 1 })
  })
})
