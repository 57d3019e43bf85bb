/**
 * DICOM de-identification: the PS3.15 Basic Application Level Confidentiality Profile on the tags
 * (dicom-profile.ts), the text of the tags through the shared text engine, and burned-in text
 * found by OCR blacked out in uncompressed pixel data. Values are never logged or returned: tag
 * actions carry a hash of the original value only.
 */
import { randomUUID } from "node:crypto"
import dcmjs, { type DicomDataset, type DicomElement } from "dcmjs"
import sharp from "sharp"
import { sha256Tagged } from "../../platform/digest.js"
import { type SanitizeFinding, type SanitizeMode, type SanitizePolicy, sanitizeText, TokenBook } from "../text.js"
import { MAX_NESTING_DEPTH, MAX_OCR_FRAMES, MAX_TEXT_CHARACTERS } from "./budgets.js"
import { type ProfileAction, type ProfileCategory, profile } from "./dicom-profile.js"
import { checkDicom, checkFramePixels, DEFLATED } from "./dicom-scan.js"
import { CorruptFile, LimitExceeded } from "./errors.js"

/** The OCR function of the shared contract (src/sanitize/files/ocr.ts), repeated here structurally. */
export type DicomOcr = (image: Uint8Array) => Promise<{
  text: string
  words: Array<{ text: string; bbox: { x0: number; y0: number; x1: number; y1: number }; confidence: number }>
}>

export interface DicomTagAction {
  tag_name: string
  tag_number: string
  action: "removed" | "emptied" | "replaced" | "tokenized" | "uid_replaced" | "cleaned"
  original_hash: string | null
}

export interface PixelRedaction {
  text_found: string
  bounding_box: [number, number, number, number]
  confidence: number
}

export interface DicomSanitized {
  bytes: Uint8Array
  text: string
  findings: SanitizeFinding[]
  token_mapping: Record<string, string> | null
  tokenized_text: string | null
  blocked: boolean
  dicom_tag_actions: DicomTagAction[]
  pixel_redactions: PixelRedaction[]
}

export interface DicomOptions {
  policy: SanitizePolicy
  mode: SanitizeMode
  includePixelRedaction: boolean
  ocr: DicomOcr
  tokens: TokenBook
}

const DEIDENTIFICATION_METHOD_TEXT = "DICOM PS3.15 E.1 Basic Application Confidentiality Profile"
const EXPLICIT_LE = "1.2.840.10008.1.2.1"
const NATIVE_SYNTAXES = new Set(["1.2.840.10008.1.2", EXPLICIT_LE, DEFLATED])

/** Character VRs whose values are text a person could have typed (their content is scanned). */
const TEXT_VRS = new Set(["PN", "LO", "SH", "ST", "LT", "UT", "UC", "UR", "CS", "AE", "DA", "TM", "DT", "AS"])
/** Character VRs that may hold a token or cleaned text, with their maximum length. */
const FREE_VRS: ReadonlyMap<string, number> = new Map([
  ["PN", 64],
  ["LO", 64],
  ["SH", 16],
  ["ST", 1024],
  ["LT", 10240],
  ["UT", Number.MAX_SAFE_INTEGER],
  ["UC", Number.MAX_SAFE_INTEGER],
])
const DUMMIES: Record<string, string> = { PN: "ANONYMOUS", DA: "19000101", TM: "000000", DT: "19000101000000", AS: "000Y", IS: "0", DS: "0" }

// dcmjs warns through its own logger; its messages can quote values.
dcmjs.log.setLevel("error")


const tagNumber = (key: string) => `(${key.slice(0, 4)},${key.slice(4)})`

const nameOf = (key: string): string => {
  const group = Number.parseInt(key.slice(0, 4), 16)
  if (group % 2 === 1) return key.slice(4, 6) === "00" ? "PrivateCreator" : "PrivateTag"
  const dictionary = dcmjs.data.DicomMetaDictionary.dictionary
  if (group >= 0x6000 && group <= 0x60ff) return dictionary[`(6000,${key.slice(4)})`]?.name ?? "OverlayGroup"
  if (group >= 0x5000 && group <= 0x50ff) return "CurveGroup"
  return dictionary[tagNumber(key)]?.name ?? "UnknownTag"
}

/** The profile's decision for a tag: private tags, overlays and curves are removed whole. */
const decide = (key: string): { action: ProfileAction; category: ProfileCategory | "private" | "overlay" } => {
  const group = Number.parseInt(key.slice(0, 4), 16)
  if (group % 2 === 1) return { action: "X", category: "private" }
  if ((group >= 0x6000 && group <= 0x60ff) || (group >= 0x5000 && group <= 0x50ff)) return { action: "X", category: "overlay" }
  return profile.get(key) ?? { action: "K", category: "identifier" }
}

const isPersonName = (value: unknown): value is { Alphabetic?: string; Ideographic?: string; Phonetic?: string } =>
  typeof value === "object" && value !== null && !(value instanceof ArrayBuffer) && !ArrayBuffer.isView(value)

/** The value as DICOM text: PN groups joined by `=`, several values by `\`. Null for binary values. */
const valueText = (element: DicomElement): string | null => {
  const parts: string[] = []
  for (const value of element.Value ?? []) {
    if (value === null || value === undefined) parts.push("")
    else if (typeof value === "string" || typeof value === "number" || typeof value === "bigint") parts.push(String(value))
    else if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return null
    else if (isPersonName(value)) parts.push([value.Alphabetic ?? "", value.Ideographic ?? "", value.Phonetic ?? ""].join("=").replace(/=+$/, ""))
    else return null
  }
  return parts.join("\\")
}

/** Bytes of a binary value (OB, OW, UN ...), concatenated. */
const valueBytes = (element: DicomElement): Uint8Array => {
  const chunks = (element.Value ?? []).flatMap((value) =>
    value instanceof ArrayBuffer ? [new Uint8Array(value)] : ArrayBuffer.isView(value) ? [new Uint8Array(value.buffer, value.byteOffset, value.byteLength)] : []
  )
  return Buffer.concat(chunks)
}

/** Text readable in an unknown-VR value (private tags read as implicit VR), else null. */
const printable = (bytes: Uint8Array): string | null => {
  const text = Buffer.from(bytes).toString("latin1").replace(/[\0 ]+$/, "")
  return text !== "" && /^[\x20-\x7e\r\n\t]+$/.test(text) ? text : null
}

/** No value, or only padding and separators (`^^`, `\\`, spaces): nothing a person could be found by. */
const isEmpty = (element: DicomElement): boolean => {
  if ((element.Value ?? []).length === 0) return true
  if (element.vr === "SQ") return false
  const text = valueText(element)
  return text === null ? valueBytes(element).byteLength === 0 : text.replace(/[\\=^\0 ]/g, "") === ""
}

/** `sha256:` of the original value's bytes: DICOM text as UTF-8, binary as is, sequences as JSON. */
const originalHash = (element: DicomElement): string | null => {
  if (isEmpty(element)) return null
  if (element.vr === "SQ")
    return sha256Tagged(JSON.stringify(element.Value, (_, value) => (value instanceof ArrayBuffer ? Buffer.from(value).toString("base64") : value)))
  const text = valueText(element)
  return sha256Tagged(text ?? valueBytes(element))
}

/** One element as the walk found it, with the action the profile gives it (X inherited from a removed sequence). */
interface Visited {
  readonly key: string
  readonly path: string
  readonly owner: DicomDataset
  readonly element: DicomElement
  readonly action: ProfileAction
  readonly category: ProfileCategory | "private" | "overlay"
  /** Set when an enclosing sequence is removed: the element goes with it. */
  readonly inherited: boolean
  readonly text: string | null
}

const walk = (dataset: DicomDataset, prefix: string, removedBy: Visited | null, out: Visited[], depth = 0) => {
  // Implicit VR sequences of defined length escape the structure check (dicom-scan.ts): checked here.
  if (depth > MAX_NESTING_DEPTH) throw new LimitExceeded("nesting_depth", MAX_NESTING_DEPTH)
  for (const key of Object.keys(dataset).sort()) {
    const element = dataset[key]!
    const name = nameOf(key)
    const path = prefix === "" ? name : `${prefix}.${name}`
    const own = removedBy === null ? decide(key) : { action: "X" as const, category: removedBy.category }
    const raw = TEXT_VRS.has(element.vr) ? valueText(element) : element.vr === "UN" ? printable(valueBytes(element)) : null
    const visited: Visited = { key, path, owner: dataset, element, ...own, inherited: removedBy !== null, text: raw === null || raw === "" ? null : raw }
    out.push(visited)
    if (element.vr === "SQ")
      (element.Value ?? []).forEach((item, index) => {
        if (typeof item === "object" && item !== null) walk(item as DicomDataset, `${path}[${index}]`, removedBy ?? (own.action === "X" ? visited : null), out, depth + 1)
      })
  }
}

const ACTION_TAKEN = { redact: "redacted", tokenize: "tokenized", block: "blocked", flag: "flagged" } as const

const CATEGORY_LABELS: Record<ProfileCategory, string> = {
  patient: "the patient's identity",
  person: "names and contacts of staff",
  date: "dates and times",
  institution: "the institution and station",
  identifier: "study and order identifiers",
  free_text: "free-text descriptions and comments",
  device: "device identifiers",
  reference: "references to other identified objects",
  image: "embedded images (icons)",
  uid: "unique identifiers",
}

/** One finding per profile category that held a value (UIDs, private tags and overlays are only in the tag actions). */
const profileFindings = (visited: ReadonlyArray<Visited>, mode: SanitizeMode): SanitizeFinding[] => {
  const byCategory = new Map<ProfileCategory, string[]>()
  for (const v of visited) {
    if (v.inherited || v.action === "K" || v.action === "U" || v.category === "private" || v.category === "overlay" || v.category === "uid") continue
    if (isEmpty(v.element)) continue
    byCategory.set(v.category, [...(byCategory.get(v.category) ?? []), v.path])
  }
  return [...byCategory].map(([category, paths]) => ({
    entity_type: `dicom_${category}`,
    severity: category === "patient" ? "critical" : "warning",
    action_taken: ACTION_TAKEN[mode],
    library: "healthcare",
    description: `DICOM attributes holding ${CATEGORY_LABELS[category]} (PS3.15 Annex E): ${[...new Set(paths)].join(", ")}`,
    count: paths.length,
  }))
}

/** Findings with the same type, library, severity and action counted together. */
const mergeFindings = (findings: ReadonlyArray<SanitizeFinding>): SanitizeFinding[] => {
  const merged = new Map<string, SanitizeFinding>()
  for (const finding of findings) {
    const key = [finding.entity_type, finding.library, finding.severity, finding.action_taken, finding.source ?? ""].join("\u0000")
    const seen = merged.get(key)
    if (seen) seen.count += finding.count
    else merged.set(key, { ...finding })
  }
  return [...merged.values()]
}

/** A fresh UID under the 2.25 (UUID) root; the same original maps to the same new UID within one file. */
const uidReplacer = () => {
  const replaced = new Map<string, string>()
  return (uid: string): string => {
    // Standard UIDs (SOP classes, transfer syntaxes) identify no one.
    if (uid === "" || uid.startsWith("1.2.840.10008.")) return uid
    let next = replaced.get(uid)
    if (next === undefined) {
      next = `2.25.${BigInt(`0x${randomUUID().replaceAll("-", "")}`).toString()}`
      replaced.set(uid, next)
    }
    return next
  }
}

const fromText = (vr: string, text: string): DicomElement => ({
  vr,
  Value: text.split("\\").map((part) => (vr === "PN" ? { Alphabetic: part } : part)),
})

const parse = async (bytes: Uint8Array, includePixelRedaction: boolean) => {
  // Lengths, nesting, element count and the frames to read checked before dcmjs allocates anything.
  await checkDicom(bytes, includePixelRedaction)
  try {
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
    const file = dcmjs.data.DicomMessage.readFile(buffer)
    const syntax = file.meta["00020010"]?.Value?.[0]
    if (typeof syntax !== "string") throw new Error("no transfer syntax")
    return { file, syntax: syntax.replace(/\0/g, "").trim() }
  } catch (error) {
    if (error instanceof CorruptFile) throw error
    throw new CorruptFile("the DICOM file could not be parsed")
  }
}

// ---------------------------------------------------------------- pixels

interface PixelLayout {
  readonly rows: number
  readonly columns: number
  readonly frames: number
  readonly samples: 1 | 3
  readonly bytesPerSample: 1 | 2
  readonly bitsStored: number
  readonly signed: boolean
  readonly monochrome1: boolean
  readonly planar: boolean
  readonly frameBytes: number
}

const numberOf = (dataset: DicomDataset, key: string): number | null => {
  const value = dataset[key]?.Value?.[0]
  const number = typeof value === "number" ? value : typeof value === "string" ? Number.parseInt(value, 10) : Number.NaN
  return Number.isFinite(number) ? number : null
}

/** The layout of uncompressed pixel data we can redact, or why not. */
const pixelLayout = (dataset: DicomDataset, syntax: string): PixelLayout | { readonly skipped: string } => {
  if (!NATIVE_SYNTAXES.has(syntax)) return { skipped: `the pixel data is compressed or big endian (transfer syntax ${syntax})` }
  const rows = numberOf(dataset, "00280010")
  const columns = numberOf(dataset, "00280011")
  const samples = numberOf(dataset, "00280002") ?? 1
  const bitsAllocated = numberOf(dataset, "00280100")
  const bitsStored = numberOf(dataset, "00280101") ?? bitsAllocated
  const photometric = String(dataset["00280004"]?.Value?.[0] ?? "").trim()
  const frames = Math.max(1, numberOf(dataset, "00280008") ?? 1)
  if (rows === null || columns === null || rows < 1 || columns < 1 || bitsStored === null) return { skipped: "the image attributes are missing" }
  const mono = (photometric === "MONOCHROME1" || photometric === "MONOCHROME2") && samples === 1 && (bitsAllocated === 8 || bitsAllocated === 16)
  const rgb = photometric === "RGB" && samples === 3 && bitsAllocated === 8
  if (!mono && !rgb) return { skipped: `the pixel format is not supported (${photometric}, ${bitsAllocated}-bit)` }
  const bytesPerSample = bitsAllocated === 16 ? 2 : 1
  return {
    rows,
    columns,
    frames,
    samples: rgb ? 3 : 1,
    bytesPerSample,
    bitsStored: Math.min(bitsStored, bitsAllocated ?? 8),
    signed: numberOf(dataset, "00280103") === 1,
    monochrome1: photometric === "MONOCHROME1",
    planar: rgb && numberOf(dataset, "00280006") === 1,
    frameBytes: rows * columns * (rgb ? 3 : 1) * bytesPerSample,
  }
}

const sampleAt = (layout: PixelLayout, view: DataView, offset: number): number => {
  if (layout.bytesPerSample === 1) return view.getUint8(offset)
  const raw = view.getUint16(offset, true) & ((1 << layout.bitsStored) - 1)
  return layout.signed && raw >= 1 << (layout.bitsStored - 1) ? raw - (1 << layout.bitsStored) : raw
}

/** One frame as 8-bit grey or RGB, as it would be displayed (MONOCHROME1 inverted, 16-bit scaled). */
const renderFrame = async (layout: PixelLayout, pixels: Uint8Array, frame: number): Promise<Uint8Array> => {
  const count = layout.rows * layout.columns
  const view = new DataView(pixels.buffer, pixels.byteOffset + frame * layout.frameBytes, layout.frameBytes)
  const out = new Uint8Array(count * layout.samples)
  if (layout.samples === 3) {
    for (let i = 0; i < count; i++)
      for (let c = 0; c < 3; c++) out[i * 3 + c] = view.getUint8(layout.planar ? c * count + i : i * 3 + c)
  } else {
    let min = Number.POSITIVE_INFINITY
    let max = Number.NEGATIVE_INFINITY
    for (let i = 0; i < count; i++) {
      const value = sampleAt(layout, view, i * layout.bytesPerSample)
      if (value < min) min = value
      if (value > max) max = value
    }
    const range = max > min ? max - min : 1
    for (let i = 0; i < count; i++) {
      const grey = layout.bytesPerSample === 1 ? view.getUint8(i) : Math.round(((sampleAt(layout, view, i * 2) - min) / range) * 255)
      out[i] = layout.monochrome1 ? 255 - grey : grey
    }
  }
  return sharp(out, { raw: { width: layout.columns, height: layout.rows, channels: layout.samples } })
    .png()
    .toBuffer()
}

/** Sets a rectangle of one frame to black as displayed: the minimum (MONOCHROME2, RGB) or the maximum (MONOCHROME1). */
const blackOut = (layout: PixelLayout, pixels: Uint8Array, frame: number, box: [number, number, number, number]) => {
  const view = new DataView(pixels.buffer, pixels.byteOffset + frame * layout.frameBytes, layout.frameBytes)
  const count = layout.rows * layout.columns
  const half = 1 << (layout.bitsStored - 1)
  const full = (1 << layout.bitsStored) - 1
  const black = layout.monochrome1 ? (layout.signed ? half - 1 : full) : layout.signed ? -half : 0
  const [x0, y0, x1, y1] = box
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const i = y * layout.columns + x
      if (layout.samples === 3) for (let c = 0; c < 3; c++) view.setUint8(layout.planar ? c * count + i : i * 3 + c, 0)
      else if (layout.bytesPerSample === 1) view.setUint8(i, black)
      else if (layout.signed) view.setInt16(i * 2, black, true)
      else view.setUint16(i * 2, black, true)
    }
}

/** Margin around a word's box, so anti-aliased edges go too. */
const PAD = 2

interface PixelPass {
  readonly texts: string[]
  readonly cleanTexts: string[]
  readonly findings: SanitizeFinding[]
  readonly blocked: boolean
  readonly redactions: PixelRedaction[]
  readonly pixels: Uint8Array | null
  readonly complete: boolean
}

const scanPixels = async (dataset: DicomDataset, syntax: string, options: DicomOptions, redacting: boolean): Promise<PixelPass> => {
  const none: PixelPass = { texts: [], cleanTexts: [], findings: [], blocked: false, redactions: [], pixels: null, complete: false }
  const element = dataset["7FE00010"]
  if (element === undefined || isEmpty(element)) return none
  const notScanned = (why: string): SanitizeFinding => ({
    entity_type: "dicom_pixel_not_scanned",
    severity: "warning",
    action_taken: "flagged",
    library: "healthcare",
    description: `Burned-in text was not looked for: ${why}`,
    count: 1,
  })
  const layout = pixelLayout(dataset, syntax)
  if ("skipped" in layout) return { ...none, findings: [notScanned(layout.skipped)] }
  // Again as dcmjs read them (the structure check reads only the top level's plain values).
  checkFramePixels(layout.rows, layout.columns, layout.frames)
  const original = valueBytes(element)
  if (original.byteLength < layout.frames * layout.frameBytes) return { ...none, findings: [notScanned("the pixel data is shorter than its image attributes say")] }
  const pixels = new Uint8Array(original)
  const frames = Math.min(layout.frames, MAX_OCR_FRAMES)
  const pass = { texts: [] as string[], cleanTexts: [] as string[], findings: [] as SanitizeFinding[], redactions: [] as PixelRedaction[], blocked: false }
  if (layout.frames > frames) pass.findings.push(notScanned(`only the first ${frames} of ${layout.frames} frames were read`))
  for (let frame = 0; frame < frames; frame++) {
    const read = await options.ocr(await renderFrame(layout, pixels, frame))
    if (read.text.trim() === "") continue
    const scan = sanitizeText(read.text, { policy: options.policy, mode: options.mode, tokens: options.tokens })
    pass.texts.push(read.text)
    pass.cleanTexts.push(scan.clean)
    pass.findings.push(...scan.findings)
    pass.blocked ||= scan.blocked
    if (!redacting) continue
    const replaced = scan.spans.filter((span) => span.replacement !== null)
    let cursor = 0
    for (const word of read.words) {
      const start = read.text.indexOf(word.text, cursor)
      if (start < 0) continue
      const end = start + word.text.length
      cursor = end
      const hits = replaced.filter((span) => span.start < end && start < span.end)
      if (hits.length === 0) continue
      const box: [number, number, number, number] = [
        Math.max(0, Math.floor(word.bbox.x0) - PAD),
        Math.max(0, Math.floor(word.bbox.y0) - PAD),
        Math.min(layout.columns, Math.ceil(word.bbox.x1) + PAD),
        Math.min(layout.rows, Math.ceil(word.bbox.y1) + PAD),
      ]
      if (box[2] <= box[0] || box[3] <= box[1]) continue
      blackOut(layout, pixels, frame, box)
      pass.redactions.push({ text_found: [...new Set(hits.map((span) => span.replacement))].join(" "), bounding_box: box, confidence: word.confidence })
    }
  }
  return { ...pass, pixels, complete: frames === layout.frames }
}

/**
 * Overlays embedded in the unused high bits of 16-bit pixel data (retired, but still written) could
 * hold annotations; the overlay attributes go with the profile, and these bits are cleared too.
 */
const clearOverlayBits = (dataset: DicomDataset, syntax: string) => {
  const element = dataset["7FE00010"]
  if (element === undefined) return
  const layout = pixelLayout(dataset, syntax)
  if ("skipped" in layout || layout.bytesPerSample !== 2 || layout.signed || layout.bitsStored >= 16) return
  if (numberOf(dataset, "00280102") !== layout.bitsStored - 1) return
  const pixels = new Uint8Array(valueBytes(element))
  const view = new DataView(pixels.buffer, pixels.byteOffset, pixels.byteLength - (pixels.byteLength % 2))
  const mask = (1 << layout.bitsStored) - 1
  for (let offset = 0; offset < view.byteLength; offset += 2) view.setUint16(offset, view.getUint16(offset, true) & mask, true)
  dataset["7FE00010"] = { vr: element.vr, Value: [pixels.buffer] }
}

// ---------------------------------------------------------------- tags

const codeItem = (value: string, meaning: string): DicomDataset => ({
  "00080100": { vr: "SH", Value: [value] },
  "00080102": { vr: "SH", Value: ["DCM"] },
  "00080104": { vr: "LO", Value: [meaning] },
})

/** Applies the profile to the visited elements (top-level actions only; removed sequences take their items along). */
const applyProfile = (visited: ReadonlyArray<Visited>, options: DicomOptions, tokenize: boolean): DicomTagAction[] => {
  const actions: DicomTagAction[] = []
  const newUid = uidReplacer()
  const tokenFor = (v: Visited): string | null => {
    const max = FREE_VRS.get(v.element.vr)
    if (!tokenize || v.text === null || max === undefined) return null
    const token = options.tokens.token(v.category, v.text)
    return token.length <= max ? token : null
  }
  for (const v of visited) {
    if (v.inherited) continue
    const record = (action: DicomTagAction["action"]) =>
      actions.push({ tag_name: v.path, tag_number: tagNumber(v.key), action, original_hash: originalHash(v.element) })
    const token = v.action === "Z" || v.action === "D" ? tokenFor(v) : null
    switch (v.action) {
      case "X":
        record("removed")
        delete v.owner[v.key]
        break
      case "Z":
        if (isEmpty(v.element)) break
        record(token === null ? "emptied" : "tokenized")
        v.owner[v.key] = token === null ? { vr: v.element.vr, Value: [] } : fromText(v.element.vr, token)
        break
      case "D": {
        if (isEmpty(v.element)) break
        const dummy = token ?? DUMMIES[v.element.vr] ?? (FREE_VRS.has(v.element.vr) || v.element.vr === "CS" ? "ANONYMIZED" : null)
        record(token !== null ? "tokenized" : dummy === null ? "emptied" : "replaced")
        v.owner[v.key] = dummy === null ? { vr: v.element.vr, Value: [] } : fromText(v.element.vr, dummy)
        break
      }
      case "U": {
        if (isEmpty(v.element)) break
        record("uid_replaced")
        v.owner[v.key] = { vr: v.element.vr, Value: (v.element.Value ?? []).map((uid) => newUid(String(uid).replace(/\0/g, "").trim())) }
        break
      }
      case "K": {
        // Kept attributes still go through the text engine: what it would replace is cleaned.
        const max = FREE_VRS.get(v.element.vr)
        if (v.text === null || max === undefined) break
        const scan = sanitizeText(v.text, { policy: options.policy, mode: tokenize ? "tokenize" : "redact", tokens: tokenize ? options.tokens : undefined })
        if (!scan.spans.some((span) => span.replacement !== null)) break
        record("cleaned")
        const fits = scan.clean.split("\\").every((part) => part.length <= max)
        v.owner[v.key] = fits ? fromText(v.element.vr, scan.clean) : { vr: v.element.vr, Value: [] }
        break
      }
    }
  }
  return actions
}

/** The tag text as the de-identified file (and its token mapping) tells it: tokens where values were taken out. */
const tokenizedLines = (visited: ReadonlyArray<Visited>, options: DicomOptions): string[] =>
  visited.flatMap((v) => {
    if (v.text === null) return []
    if (v.action === "K") return [`${v.path}: ${sanitizeText(v.text, { policy: options.policy, mode: "tokenize", tokens: options.tokens }).clean}`]
    return [`${v.path}: ${options.tokens.token(v.category, v.text)}`]
  })

export const sanitizeDicom = async (bytes: Uint8Array, options: DicomOptions): Promise<DicomSanitized> => {
  const { file, syntax } = await parse(bytes, options.includePixelRedaction)
  const visited: Visited[] = []
  walk(file.meta, "", null, visited)
  walk(file.dict, "", null, visited)
  const lines = visited.flatMap((v) => (v.text === null ? [] : [`${v.path}: ${v.text}`]))
  const tagText = lines.join("\n")
  if (tagText.length > MAX_TEXT_CHARACTERS) throw new LimitExceeded("text_characters", MAX_TEXT_CHARACTERS)
  // The whole tag text is scanned once for the findings; its tokens go to a scratch book, since
  // the values themselves are tokenized below.
  const scan = tagText === "" ? null : sanitizeText(tagText, { policy: options.policy, mode: options.mode, tokens: new TokenBook() })
  const redacting = options.mode === "redact" || options.mode === "tokenize"
  const tokenize = options.mode === "tokenize"
  // Token-shaped strings already in the file are never minted, so detokenizing cannot touch them.
  if (tokenize) options.tokens.reserve(tagText)
  const pixels = options.includePixelRedaction ? await scanPixels(file.dict, syntax, options, redacting) : null
  const findings = mergeFindings([...(scan?.findings ?? []), ...profileFindings(visited, options.mode), ...(pixels?.findings ?? [])])
  const text = [tagText, ...(pixels?.texts ?? [])].filter((part) => part !== "").join("\n")
  if (!redacting) {
    const blocked = options.mode === "block" && (findings.length > 0 || scan?.blocked === true || pixels?.blocked === true)
    return { bytes, text, findings, token_mapping: null, tokenized_text: null, blocked, dicom_tag_actions: [], pixel_redactions: [] }
  }
  const tokenizedText = tokenize ? [...tokenizedLines(visited, options), ...(pixels?.cleanTexts ?? [])].join("\n") : null
  const dicomTagActions = applyProfile(visited, options, tokenize)
  const dataset = file.dict
  const pixelCleaned = pixels?.pixels !== null && pixels?.pixels !== undefined
  if (pixelCleaned && pixels.redactions.length > 0) {
    const original = dataset["7FE00010"]!
    dataset["7FE00010"] = { vr: original.vr, Value: [pixels.pixels!.buffer] }
  }
  if (visited.some((v) => v.category === "overlay" && v.key.startsWith("60"))) clearOverlayBits(dataset, syntax)
  dataset["00120062"] = { vr: "CS", Value: ["YES"] }
  dataset["00120063"] = { vr: "LO", Value: [DEIDENTIFICATION_METHOD_TEXT] }
  dataset["00120064"] = {
    vr: "SQ",
    Value: [
      codeItem("113100", "Basic Application Confidentiality Profile"),
      ...(pixelCleaned && pixels.complete ? [codeItem("113101", "Clean Pixel Data Option")] : []),
    ],
  }
  // dcmjs reads deflated files inflated but does not deflate on write.
  if (syntax === DEFLATED) file.meta["00020010"] = { vr: "UI", Value: [EXPLICIT_LE] }
  let output: ArrayBuffer
  try {
    output = file.write()
  } catch {
    throw new CorruptFile("the DICOM file could not be written back")
  }
  return {
    bytes: new Uint8Array(output),
    text,
    findings,
    token_mapping: tokenize ? options.tokens.mapping() : null,
    tokenized_text: tokenizedText,
    blocked: false,
    dicom_tag_actions: dicomTagActions,
    pixel_redactions: pixels?.redactions ?? [],
  }
}
