/**
 * A walk over a DICOM Part 10 file's element headers before any parser reads it: every length
 * must fit in what is left of the file (or of the sequence or item holding it), sequences may nest
 * only so deep, and the file may hold only so many elements; a deflated dataset is first inflated
 * without being kept, to measure it against a ceiling. Values are skipped, never read, except the
 * transfer syntax and the image size (rows, columns, samples, frames) of the top-level dataset.
 * In implicit VR a sequence of defined length cannot be told from other values without a
 * dictionary: its bytes are checked as one value, and the parser checks what is inside.
 */
import { createInflateRaw, inflateRawSync } from "node:zlib"
import { MAX_DICOM_ELEMENTS, MAX_FILE_PIXELS, MAX_IMAGE_PIXELS, MAX_INFLATED_BYTES, MAX_NESTING_DEPTH, MAX_OCR_FRAMES } from "./budgets.js"
import { CorruptFile, LimitExceeded } from "./errors.js"

const PREAMBLE = 132
const UNDEFINED = 0xffffffff
const IMPLICIT_LE = "1.2.840.10008.1.2"
const EXPLICIT_BE = "1.2.840.10008.1.2.2"
export const DEFLATED = "1.2.840.10008.1.2.1.99"

/** Explicit VRs whose length takes 4 bytes after 2 reserved ones. */
const LONG_VRS = new Set(["OB", "OD", "OF", "OL", "OV", "OW", "SQ", "SV", "UC", "UN", "UR", "UT", "UV"])

interface Syntax {
  readonly explicit: boolean
  readonly little: boolean
}

/** What holds the elements being read: the dataset, a sequence, an item, or encapsulated pixel data. */
interface Container {
  readonly kind: "dataset" | "sequence" | "item" | "fragments"
  /** Offset where it ends; undefined until its delimiter. */
  readonly end: number | undefined
}

interface Header {
  readonly group: number
  readonly element: number
  readonly vr: string | undefined
  readonly length: number
  readonly size: number
}

const corrupt = (why: string) => new CorruptFile(`the DICOM file is malformed: ${why}`)

const readHeader = (view: DataView, at: number, syntax: Syntax): Header => {
  if (at + 8 > view.byteLength) throw corrupt("an element header runs past the end of the file")
  const little = syntax.little
  const group = view.getUint16(at, little)
  const element = view.getUint16(at + 2, little)
  // Items and delimiters have no VR in any syntax.
  if (group === 0xfffe || !syntax.explicit) return { group, element, vr: undefined, length: view.getUint32(at + 4, little), size: 8 }
  const vr = String.fromCharCode(view.getUint8(at + 4), view.getUint8(at + 5))
  if (!LONG_VRS.has(vr)) return { group, element, vr, length: view.getUint16(at + 6, little), size: 8 }
  if (at + 12 > view.byteLength) throw corrupt("an element header runs past the end of the file")
  return { group, element, vr, length: view.getUint32(at + 8, little), size: 12 }
}

/** The image size the top-level dataset declares (absent attributes: undefined). */
export interface DeclaredFrames {
  rows?: number
  columns?: number
  samples?: number
  frames?: number
}

/** Image attributes read from the top-level dataset: (0028,0002), (0028,0008), (0028,0010), (0028,0011). */
const IMAGE_TAGS: Record<number, keyof DeclaredFrames> = { 2: "samples", 8: "frames", 16: "rows", 17: "columns" }

interface Walked {
  readonly syntax: string | undefined
  readonly end: number
  readonly image: DeclaredFrames
}

/** Walks elements from `start` to the end of `bytes`; answers the transfer syntax when `meta` (group 0002 only). */
const walk = (bytes: Uint8Array, start: number, syntax: Syntax, meta: boolean): Walked => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const stack: Container[] = [{ kind: "dataset", end: undefined }]
  let at = start
  let elements = 0
  let transferSyntax: string | undefined
  const image: DeclaredFrames = {}
  const depth = () => stack.filter((c) => c.kind === "sequence").length
  /** Where the innermost container of defined length ends (or the file). */
  const boundary = () => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.end !== undefined) return stack[i]!.end!
    return bytes.length
  }
  const open = (kind: Container["kind"], length: number, valueAt: number) => {
    const end = length === UNDEFINED ? undefined : valueAt + length
    if (end !== undefined && end > boundary()) throw corrupt(`a ${kind} is longer than what holds it`)
    stack.push({ kind, end })
    if (depth() > MAX_NESTING_DEPTH) throw new LimitExceeded("nesting_depth", MAX_NESTING_DEPTH)
  }
  for (;;) {
    const top = stack[stack.length - 1]!
    if (top.end !== undefined && at >= top.end) {
      if (at > top.end) throw corrupt(`a ${top.kind} overruns its length`)
      stack.pop()
      continue
    }
    if (at >= bytes.length) {
      if (stack.length > 1) throw corrupt("a sequence or item is not closed before the end of the file")
      return { syntax: transferSyntax, end: at, image }
    }
    // The file meta group ends where group 0002 does.
    if (meta && stack.length === 1 && at + 2 <= bytes.length && view.getUint16(at, true) !== 0x0002) return { syntax: transferSyntax, end: at, image }
    const header = readHeader(view, at, syntax)
    const valueAt = at + header.size
    if (++elements > MAX_DICOM_ELEMENTS) throw new LimitExceeded("elements", MAX_DICOM_ELEMENTS)
    if (header.group === 0xfffe) {
      at = valueAt
      if (header.element === 0xe000 && top.kind === "sequence") open("item", header.length, valueAt)
      else if (header.element === 0xe000 && top.kind === "fragments") {
        if (header.length === UNDEFINED || valueAt + header.length > boundary()) throw corrupt("a pixel data fragment is longer than the file")
        at += header.length
      } else if (header.element === 0xe00d && top.kind === "item" && top.end === undefined) stack.pop()
      else if (header.element === 0xe0dd && (top.kind === "sequence" || top.kind === "fragments") && top.end === undefined) stack.pop()
      else throw corrupt("an item or delimiter where none belongs")
      continue
    }
    if (header.length === UNDEFINED) {
      // Undefined length: a sequence, or encapsulated pixel data (fragments in items).
      const pixels = header.group === 0x7fe0 && header.element === 0x0010 && header.vr !== "SQ"
      if (header.vr !== undefined && header.vr !== "SQ" && header.vr !== "UN" && !pixels) throw corrupt("an element of undefined length is not a sequence")
      open(pixels ? "fragments" : "sequence", UNDEFINED, valueAt)
      at = valueAt
      continue
    }
    if (valueAt + header.length > boundary()) throw corrupt("an element is longer than the file")
    if (header.vr === "SQ") {
      open("sequence", header.length, valueAt)
      at = valueAt
      continue
    }
    const text = () => Buffer.from(bytes.subarray(valueAt, valueAt + header.length)).toString("latin1").replace(/[\0 ]+$/, "")
    if (meta && header.group === 0x0002 && header.element === 0x0010) transferSyntax = text()
    const attribute = stack.length === 1 && header.group === 0x0028 ? IMAGE_TAGS[header.element] : undefined
    // Number of Frames is a decimal string; the others are unsigned shorts.
    if (attribute === "frames") image.frames = Number.parseInt(text(), 10) || 1
    else if (attribute !== undefined && header.length === 2) image[attribute] = view.getUint16(valueAt, syntax.little)
    at = valueAt + header.length
  }
}

/** The transfer syntax named in the file meta group (read after the same checks). */
export const transferSyntaxOf = (bytes: Uint8Array): string | undefined => {
  if (bytes.length < PREAMBLE || Buffer.from(bytes.subarray(128, 132)).toString("latin1") !== "DICM") throw corrupt("no DICM at offset 128")
  return walk(bytes, PREAMBLE, { explicit: true, little: true }, true).syntax
}

/** Inflates without keeping the output: how large the dataset is, or past the ceiling. */
const inflatedSize = (deflated: Uint8Array) =>
  new Promise<number>((resolve, reject) => {
    const inflate = createInflateRaw()
    let size = 0
    inflate.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_INFLATED_BYTES) return
      inflate.destroy()
      reject(new LimitExceeded("decoder_memory_mb", MAX_INFLATED_BYTES / 1024 / 1024))
    })
    inflate.on("end", () => resolve(size))
    inflate.on("error", () => reject(corrupt("the deflated dataset does not inflate")))
    inflate.end(deflated)
  })

/**
 * Checks the whole file's structure; throws `CorruptFile` or `LimitExceeded`, else answers the
 * image size it declares. A deflated dataset is measured, and walked only with `inflate` (the
 * inflated copy is worth making where dcmjs will read it, not on the request loop).
 */
export const checkDicomStructure = async (bytes: Uint8Array, inflate = true): Promise<DeclaredFrames> => {
  if (bytes.length < PREAMBLE || Buffer.from(bytes.subarray(128, 132)).toString("latin1") !== "DICM") throw corrupt("no DICM at offset 128")
  const meta = walk(bytes, PREAMBLE, { explicit: true, little: true }, true)
  if (meta.syntax === undefined) throw corrupt("the file meta group names no transfer syntax")
  if (meta.syntax === DEFLATED) {
    const deflated = bytes.subarray(meta.end)
    // Measured first, so a bomb never takes the ceiling's worth of memory.
    await inflatedSize(deflated)
    return inflate ? walk(inflateRawSync(deflated, { maxOutputLength: MAX_INFLATED_BYTES }), 0, { explicit: true, little: true }, false).image : {}
  }
  return walk(bytes, meta.end, { explicit: meta.syntax !== IMPLICIT_LE, little: meta.syntax !== EXPLICIT_BE }, false).image
}

/** Frames of rows × columns against the pixel budgets (the frames read for burned-in text). */
export const checkFramePixels = (rows: number, columns: number, frames: number): void => {
  if (rows * columns > MAX_IMAGE_PIXELS) throw new LimitExceeded("pixels", MAX_IMAGE_PIXELS)
  if (rows * columns * Math.min(frames, MAX_OCR_FRAMES) > MAX_FILE_PIXELS) throw new LimitExceeded("file_pixels", MAX_FILE_PIXELS)
}

/** The structure, and when the pixels are to be read, the frames the file declares against the budgets. */
export const checkDicom = async (bytes: Uint8Array, includePixelRedaction: boolean, inflate = true): Promise<void> => {
  const declared = await checkDicomStructure(bytes, inflate)
  if (includePixelRedaction) checkFramePixels(declared.rows ?? 0, declared.columns ?? 0, declared.frames ?? 1)
}
