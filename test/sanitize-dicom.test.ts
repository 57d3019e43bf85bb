/**
 * DICOM de-identification on files generated here with dcmjs: the PS3.15 Basic profile on the tags,
 * hashes instead of values, consistent UIDs, private tags gone, and burned-in text blacked out in
 * the pixels (checked by OCR'ing the output with a real tesseract.js worker).
 */
import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { deflateRawSync } from "node:zlib"
import dcmjs, { type DicomDataset } from "dcmjs"
import fc from "fast-check"
import sharp from "sharp"
import { createWorker, type Worker } from "tesseract.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DicomOcr, sanitizeDicom } from "../src/sanitize/files/dicom.js"
import { CorruptFile } from "../src/sanitize/files/errors.js"
import { detokenize, type SanitizeMode, TokenBook } from "../src/sanitize/text.js"

const { DicomDict, DicomMessage, DicomMetaDictionary } = dcmjs.data

const EXPLICIT_LE = "1.2.840.10008.1.2.1"
const IMPLICIT_LE = "1.2.840.10008.1.2"
const SECONDARY_CAPTURE = "1.2.840.10008.5.1.4.1.1.7"
const UIDS = {
  study: "1.2.826.0.1.3680043.9999.71.1",
  series: "1.2.826.0.1.3680043.9999.71.1.2",
  instance: "1.2.826.0.1.3680043.9999.71.1.2.3",
  frame: "1.2.826.0.1.3680043.9999.71.1.9",
}
const PATIENT = {
  PatientName: "WHITAKER^ROSALIND",
  PatientID: "MRN00417723",
  PatientBirthDate: "19640412",
  InstitutionName: "Riverside General Hospital",
  ReferringPhysicianName: "HOUSEMAN^GREGORY",
  StudyDate: "20240311",
  StudyTime: "101500",
  AccessionNumber: "ACC778812",
  StudyDescription: "Chest follow-up for Rosalind",
}
const PRIVATE_VALUE = "PRIVATE-NOTE-QX7731"
const SIZE = 256

interface Build {
  readonly name?: string
  readonly id?: string
  readonly syntax?: string
  readonly pixels?: Uint8Array
  /** Image attributes replacing the 8-bit MONOCHROME2 ones. */
  readonly image?: Record<string, unknown>
  /** Elements added as they are (dcmjs keys). */
  readonly extra?: DicomDataset
}

/** A secondary-capture Part 10 file: patient, study and institution tags, UIDs, a private tag, one 8-bit frame. */
const buildDicom = ({ name = PATIENT.PatientName, id = PATIENT.PatientID, syntax = EXPLICIT_LE, pixels = new Uint8Array(SIZE * SIZE), image, extra }: Build = {}) => {
  const meta = DicomMetaDictionary.denaturalizeDataset({
    FileMetaInformationVersion: new Uint8Array([0, 1]).buffer,
    MediaStorageSOPClassUID: SECONDARY_CAPTURE,
    MediaStorageSOPInstanceUID: UIDS.instance,
    TransferSyntaxUID: syntax,
    ImplementationClassUID: "1.2.826.0.1.3680043.9999.1",
  })
  const file = new DicomDict(meta)
  file.dict = DicomMetaDictionary.denaturalizeDataset({
    ...PATIENT,
    PatientName: name,
    PatientID: id,
    PatientSex: "F",
    Modality: "OT",
    Manufacturer: "ACME",
    SOPClassUID: SECONDARY_CAPTURE,
    SOPInstanceUID: UIDS.instance,
    StudyInstanceUID: UIDS.study,
    SeriesInstanceUID: UIDS.series,
    FrameOfReferenceUID: UIDS.frame,
    SourceImageSequence: [{ ReferencedSOPClassUID: SECONDARY_CAPTURE, ReferencedSOPInstanceUID: UIDS.instance }],
    Rows: SIZE,
    Columns: SIZE,
    SamplesPerPixel: 1,
    PhotometricInterpretation: "MONOCHROME2",
    BitsAllocated: 8,
    BitsStored: 8,
    HighBit: 7,
    PixelRepresentation: 0,
    PixelData: pixels.slice().buffer,
    _vrMap: { PixelData: "OB" },
    ...image,
  })
  Object.assign(file.dict, extra)
  file.dict["00090010"] = { vr: "LO", Value: ["ACME RESEARCH"] }
  file.dict["00091001"] = { vr: "LO", Value: [PRIVATE_VALUE] }
  return new Uint8Array(file.write())
}

/** A 256×256 frame: burned-in patient name and SSN at the top, a harmless label and a grey disc below. */
const burnedInFrame = async () => {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}">
    <rect width="${SIZE}" height="${SIZE}" fill="black"/>
    <circle cx="170" cy="150" r="40" fill="#909090"/>
    <text x="8" y="34" font-family="DejaVu Sans, sans-serif" font-size="22" fill="white">JOHN SMITH</text>
    <text x="8" y="70" font-family="DejaVu Sans, sans-serif" font-size="22" fill="white">123-45-6789</text>
    <text x="8" y="236" font-family="DejaVu Sans, sans-serif" font-size="22" fill="white">AXIAL</text>
  </svg>`
  const { data, info } = await sharp(Buffer.from(svg)).flatten().toColourspace("b-w").raw().toBuffer({ resolveWithObject: true })
  expect([info.width, info.height, info.channels]).toEqual([SIZE, SIZE, 1])
  return new Uint8Array(data)
}

const read = (bytes: Uint8Array) => DicomMessage.readFile(bytes.slice().buffer)
const pixelsOf = (dataset: DicomDataset) => new Uint8Array(dataset["7FE00010"]!.Value![0] as ArrayBuffer)
const first = (dataset: DicomDataset, key: string) => dataset[key]?.Value?.[0]
/** Zero length as dcmjs reads it back: no value, or one empty string or empty name. */
const emptied = (dataset: DicomDataset, key: string) =>
  (dataset[key]?.Value ?? []).every((value) => value === "" || (typeof value === "object" && value !== null && !(value as { Alphabetic?: string }).Alphabetic))
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`
const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1")

let worker: Worker
const ocr: DicomOcr = async (image) => {
  const result = await worker.recognize(Buffer.from(image), {}, { blocks: true, text: false } as never)
  const lines = (result.data.blocks ?? []).flatMap((block) => block.paragraphs.flatMap((paragraph) => paragraph.lines))
  const words = lines.flatMap((line) =>
    line.words.filter((word) => word.text.trim() !== "").map((word) => ({ text: word.text.trim(), bbox: word.bbox, confidence: word.confidence / 100 }))
  )
  const text = lines
    .map((line) => line.words.map((word) => word.text.trim()).filter((word) => word !== "").join(" "))
    .filter((line) => line !== "")
    .join("\n")
  return { text, words }
}
const noOcr: DicomOcr = async () => {
  throw new Error("OCR must not run without include_pixel_redaction")
}
const frameText = async (pixels: Uint8Array) => (await ocr(await sharp(pixels, { raw: { width: SIZE, height: SIZE, channels: 1 } }).png().toBuffer())).text

const run = (bytes: Uint8Array, mode: SanitizeMode, pixel = false) =>
  sanitizeDicom(bytes, { policy: "hipaa", mode, includePixelRedaction: pixel, ocr: pixel ? ocr : noOcr, tokens: new TokenBook() })

beforeAll(async () => {
  const langPath = join(dirname(createRequire(import.meta.url).resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int")
  worker = await createWorker("eng", 1, { langPath, gzip: true, cacheMethod: "none", logger: () => {} })
  await worker.setParameters({ user_defined_dpi: "300" })
})
afterAll(async () => {
  await worker?.terminate()
})

describe("sanitizeDicom: tags (PS3.15 Basic profile)", () => {
  it("removes or empties the patient tags, hashes the originals, replaces UIDs consistently and drops private tags", async () => {
    const input = buildDicom()
    const result = await run(input, "redact")
    const out = read(result.bytes)
    const actions = new Map(result.dicom_tag_actions.map((action) => [action.tag_number, action]))

    // Patient identity: Z attributes present and empty, X attributes gone.
    for (const key of ["00100010", "00100020", "00100030", "00080090", "00080020", "00080050"]) {
      expect(out.dict[key]).toBeDefined()
      expect(emptied(out.dict, key)).toBe(true)
    }
    for (const key of ["00080080", "00081030", "00090010", "00091001"]) expect(out.dict[key]).toBeUndefined()
    expect(actions.get("(0010,0010)")).toEqual({ tag_name: "PatientName", tag_number: "(0010,0010)", action: "emptied", original_hash: sha256(PATIENT.PatientName) })
    expect(actions.get("(0010,0020)")).toMatchObject({ action: "emptied", original_hash: sha256(PATIENT.PatientID) })
    expect(actions.get("(0010,0030)")).toMatchObject({ action: "emptied", original_hash: sha256(PATIENT.PatientBirthDate) })
    expect(actions.get("(0008,0080)")).toMatchObject({ tag_name: "InstitutionName", action: "removed", original_hash: sha256(PATIENT.InstitutionName) })
    expect(actions.get("(0008,0090)")).toMatchObject({ action: "emptied", original_hash: sha256(PATIENT.ReferringPhysicianName) })
    expect(actions.get("(0009,1001)")).toMatchObject({ tag_name: "PrivateTag", action: "removed", original_hash: sha256(PRIVATE_VALUE) })
    expect(actions.get("(0008,0020)")).toMatchObject({ tag_name: "StudyDate", original_hash: sha256(PATIENT.StudyDate) })

    // Kept: technical attributes.
    expect(first(out.dict, "00080060")).toBe("OT")
    expect(first(out.dict, "00080070")).toBe("ACME")
    expect(first(out.dict, "00080016")).toBe(SECONDARY_CAPTURE)

    // UIDs: new, and the same new value wherever the same original was.
    const instance = first(out.dict, "00080018") as string
    expect(instance).toMatch(/^2\.25\.\d+$/)
    expect(first(out.meta, "00020003")).toBe(instance)
    const source = out.dict["00082112"]!.Value![0] as DicomDataset
    expect(first(source, "00081155")).toBe(instance)
    expect(first(source, "00081150")).toBe(SECONDARY_CAPTURE)
    expect(first(out.dict, "0020000D")).not.toBe(UIDS.study)
    expect(first(out.dict, "0020000E")).not.toBe(instance)
    expect(actions.get("(0020,000D)")).toMatchObject({ action: "uid_replaced", original_hash: sha256(UIDS.study) })
    expect(result.dicom_tag_actions.find((action) => action.tag_name === "SourceImageSequence[0].ReferencedSOPInstanceUID")).toMatchObject({
      action: "uid_replaced",
    })

    // Marked as de-identified.
    expect(first(out.dict, "00120062")).toBe("YES")
    expect(String(first(out.dict, "00120063"))).toContain("PS3.15")
    expect(first(out.dict["00120064"]!.Value![0] as DicomDataset, "00080100")).toBe("113100")

    // No original value anywhere: not in the file, not in the answer.
    const answer = JSON.stringify({ ...result, bytes: undefined, text: undefined })
    for (const value of [...Object.values(PATIENT), ...Object.values(UIDS), PRIVATE_VALUE, "ROSALIND", "WHITAKER", "HOUSEMAN"]) {
      expect(latin1(result.bytes)).not.toContain(value)
      expect(answer).not.toContain(value)
    }
    // The text the file held is reported (the caller hashes and scans it), with findings per profile category.
    expect(result.text).toContain(`PatientName: ${PATIENT.PatientName}`)
    expect(result.findings).toContainEqual(expect.objectContaining({ entity_type: "dicom_patient", severity: "critical", action_taken: "redacted", library: "healthcare" }))
    expect(result.findings.map((finding) => finding.description).join("\n")).not.toContain("ROSALIND")
    expect(result.blocked).toBe(false)
    expect(result.pixel_redactions).toEqual([])
  })

  it("reads and writes implicit VR little endian, where private tags arrive without a VR", async () => {
    const result = await run(buildDicom({ syntax: IMPLICIT_LE }), "redact")
    const out = read(result.bytes)
    expect(first(out.meta, "00020010")).toBe(IMPLICIT_LE)
    expect(out.dict["00091001"]).toBeUndefined()
    expect(emptied(out.dict, "00100010")).toBe(true)
    expect(result.text).toContain(PRIVATE_VALUE)
    for (const value of [PATIENT.PatientName, PATIENT.PatientID, PRIVATE_VALUE, UIDS.study]) expect(latin1(result.bytes)).not.toContain(value)
  })

  it("deflated explicit VR little endian is read and written back as explicit VR little endian", async () => {
    const plain = buildDicom({ syntax: "1.2.840.10008.1.2.1.99" })
    // dcmjs writes the dataset undeflated: deflate it here. The meta ends after its group length (at 140).
    const metaEnd = 144 + new DataView(plain.buffer, plain.byteOffset).getUint32(140, true)
    const input = new Uint8Array([...plain.subarray(0, metaEnd), ...deflateRawSync(plain.subarray(metaEnd))])
    expect(first(read(input).dict, "00100020")).toBe(PATIENT.PatientID)
    const result = await run(input, "redact")
    const out = read(result.bytes)
    expect(first(out.meta, "00020010")).toBe(EXPLICIT_LE)
    expect(emptied(out.dict, "00100020")).toBe(true)
    expect(first(out.dict, "00080060")).toBe("OT")
    for (const value of [PATIENT.PatientName, PATIENT.PatientID, PRIVATE_VALUE, UIDS.study]) expect(latin1(result.bytes)).not.toContain(value)
  })

  it("tokenize puts reversible tokens where the patient's values were", async () => {
    const tokens = new TokenBook()
    const result = await sanitizeDicom(buildDicom(), { policy: "hipaa", mode: "tokenize", includePixelRedaction: false, ocr: noOcr, tokens })
    const out = read(result.bytes)
    const name = (out.dict["00100010"]!.Value![0] as { Alphabetic: string }).Alphabetic
    expect(name).toMatch(/^<[A-Z_]+_\d{3}>$/)
    expect(result.token_mapping?.[name]).toBe(PATIENT.PatientName)
    expect(result.dicom_tag_actions.find((action) => action.tag_number === "(0010,0010)")?.action).toBe("tokenized")
    expect(result.findings.every((finding) => finding.action_taken === "tokenized")).toBe(true)
    expect(result.tokenized_text).toContain(`PatientName: ${name}`)
    expect(result.tokenized_text).not.toContain("ROSALIND")
    expect(detokenize(result.tokenized_text!, result.token_mapping!)).toBe(result.text)
    for (const value of [PATIENT.PatientName, PATIENT.PatientID, PRIVATE_VALUE, UIDS.study]) expect(latin1(result.bytes)).not.toContain(value)
  })

  it("block answers blocked with the bytes unchanged; flag reports only", async () => {
    const input = buildDicom()
    const blocked = await run(input, "block")
    expect(blocked.blocked).toBe(true)
    expect(blocked.bytes).toEqual(input)
    expect(blocked.findings.every((finding) => finding.action_taken === "blocked")).toBe(true)
    expect(blocked.dicom_tag_actions).toEqual([])
    const flagged = await run(input, "flag")
    expect(flagged.blocked).toBe(false)
    expect(flagged.bytes).toEqual(input)
    expect(flagged.findings.length).toBeGreaterThan(0)
    expect(flagged.findings.every((finding) => finding.action_taken === "flagged")).toBe(true)
    expect(flagged.token_mapping).toBeNull()
  })

  it("input it cannot parse is CorruptFile", async () => {
    const valid = buildDicom()
    const garbage = new Uint8Array(400).fill(0x41)
    garbage.set(Buffer.from("DICM"), 128)
    for (const bytes of [new Uint8Array(0), new Uint8Array(100), garbage, valid.slice(0, 300), Buffer.from("%PDF-1.7 not dicom")]) {
      await expect(run(bytes, "redact")).rejects.toBeInstanceOf(CorruptFile)
    }
  })

  it("property: random patient names and IDs never survive in the output or the answer", async () => {
    const component = fc.stringMatching(/^[A-Z]{6,14}$/)
    await fc.assert(
      fc.asyncProperty(component, component, fc.stringMatching(/^[A-Z0-9]{7,16}$/), fc.constantFrom<SanitizeMode>("redact", "tokenize"), async (family, given, id, mode) => {
        const name = `${family}^${given}`
        const result = await run(buildDicom({ name, id, pixels: new Uint8Array(SIZE * SIZE) }), mode)
        const bytes = latin1(result.bytes)
        const answer = JSON.stringify({ ...result, bytes: undefined, text: undefined, tokenized_text: undefined, token_mapping: undefined })
        for (const value of [name, id, family, given]) {
          expect(bytes).not.toContain(value)
          expect(answer).not.toContain(value)
        }
        if (mode === "tokenize") expect(Object.values(result.token_mapping ?? {})).toContain(name)
      }),
      { numRuns: 30 }
    )
  })
})

describe("sanitizeDicom: burned-in text", () => {
  it("blacks out the sensitive words in the pixel data and leaves the rest of the image as it was", async () => {
    const frame = await burnedInFrame()
    const before = await frameText(frame)
    expect(before).toContain("SMITH")
    expect(before).toContain("123-45-6789")
    expect(before).toContain("AXIAL")

    const result = await run(buildDicom({ pixels: frame }), "redact", true)
    expect(result.pixel_redactions.length).toBeGreaterThanOrEqual(3)
    for (const redaction of result.pixel_redactions) {
      expect(redaction.bounding_box).toHaveLength(4)
      expect(redaction.confidence).toBeGreaterThan(0)
      expect(redaction.confidence).toBeLessThanOrEqual(1)
      expect(redaction.text_found).not.toMatch(/JOHN|SMITH|6789/)
    }
    expect(result.findings.map((finding) => finding.entity_type)).toEqual(expect.arrayContaining(["us_ssn", "ner_person"]))
    expect(result.text).toContain("123-45-6789")
    expect(first(read(result.bytes).dict["00120064"]!.Value![1] as DicomDataset, "00080100")).toBe("113101")

    const after = pixelsOf(read(result.bytes).dict)
    const text = await frameText(after)
    for (const gone of ["JOHN", "SMITH", "123", "6789"]) expect(text).not.toContain(gone)
    expect(text).toContain("AXIAL")

    // Outside the redacted boxes every pixel is unchanged; inside, black.
    const inBox = (x: number, y: number) => result.pixel_redactions.some(({ bounding_box: [x0, y0, x1, y1] }) => x >= x0 && x < x1 && y >= y0 && y < y1)
    let changedOutside = 0
    let blackInside = 0
    let inside = 0
    for (let y = 0; y < SIZE; y++)
      for (let x = 0; x < SIZE; x++) {
        const i = y * SIZE + x
        if (inBox(x, y)) {
          inside++
          if (after[i] === 0) blackInside++
        } else if (after[i] !== frame[i]) changedOutside++
      }
    expect(changedOutside).toBe(0)
    expect(blackInside).toBe(inside)
    // The disc is below the text and untouched.
    expect(after[150 * SIZE + 170]).toBe(frame[150 * SIZE + 170])
  })

  it("tokenize names the redacted words by their tokens; block finds burned-in text without changing the file", async () => {
    const frame = await burnedInFrame()
    const tokenized = await run(buildDicom({ pixels: frame }), "tokenize", true)
    expect(tokenized.pixel_redactions.some((redaction) => /^<US_SSN_\d{3}>$/.test(redaction.text_found))).toBe(true)
    expect(Object.values(tokenized.token_mapping ?? {})).toContain("123-45-6789")
    expect(tokenized.tokenized_text).not.toContain("123-45-6789")

    const input = buildDicom({ pixels: frame })
    const blocked = await run(input, "block", true)
    expect(blocked.blocked).toBe(true)
    expect(blocked.bytes).toEqual(input)
    expect(blocked.findings.map((finding) => finding.entity_type)).toContain("us_ssn")
  })

  it("16-bit MONOCHROME1: rendered as displayed for OCR, blacked out with the maximum, embedded overlay bits cleared", async () => {
    const grey = await burnedInFrame()
    // 12 bits stored; MONOCHROME1 shows high values dark, so the white text is stored low. Bit 15 carries an embedded overlay.
    const words = new Uint16Array(SIZE * SIZE)
    for (let i = 0; i < words.length; i++) words[i] = Math.round(((255 - grey[i]!) / 255) * 4095) | (i % 7 === 0 ? 0x8000 : 0)
    const pixels = new Uint8Array(words.buffer)
    const input = buildDicom({
      pixels,
      image: { PhotometricInterpretation: "MONOCHROME1", BitsAllocated: 16, BitsStored: 12, HighBit: 11, _vrMap: { PixelData: "OW" } },
      extra: { "60000010": { vr: "US", Value: [SIZE] }, "60000011": { vr: "US", Value: [SIZE] }, "60000100": { vr: "US", Value: [1] }, "60000102": { vr: "US", Value: [15] } },
    })
    const result = await run(input, "redact", true)
    expect(result.pixel_redactions.length).toBeGreaterThanOrEqual(3)
    expect(result.dicom_tag_actions).toContainEqual(expect.objectContaining({ tag_number: "(6000,0102)", action: "removed" }))
    const out = read(result.bytes)
    expect(out.dict["60000010"]).toBeUndefined()
    const after = new Uint16Array(pixelsOf(out.dict).slice().buffer)
    const inBox = (x: number, y: number) => result.pixel_redactions.some(({ bounding_box: [x0, y0, x1, y1] }) => x >= x0 && x < x1 && y >= y0 && y < y1)
    let wrong = 0
    for (let y = 0; y < SIZE; y++)
      for (let x = 0; x < SIZE; x++) {
        const i = y * SIZE + x
        if (after[i] !== (inBox(x, y) ? 4095 : words[i]! & 0x0fff)) wrong++
      }
    expect(wrong).toBe(0)
    const shown = new Uint8Array(SIZE * SIZE).map((_, i) => 255 - Math.round((after[i]! / 4095) * 255))
    const text = await frameText(shown)
    for (const gone of ["SMITH", "6789"]) expect(text).not.toContain(gone)
    expect(text).toContain("AXIAL")
  })

  it("8-bit RGB: the sensitive words are blacked out in all three samples", async () => {
    const grey = await burnedInFrame()
    const rgb = new Uint8Array(SIZE * SIZE * 3).map((_, i) => (i % 3 === 0 ? grey[Math.floor(i / 3)]! : Math.floor(grey[Math.floor(i / 3)]! / 2)))
    const input = buildDicom({ pixels: rgb, image: { PhotometricInterpretation: "RGB", SamplesPerPixel: 3, PlanarConfiguration: 0 } })
    const result = await run(input, "redact", true)
    expect(result.pixel_redactions.length).toBeGreaterThanOrEqual(3)
    const after = pixelsOf(read(result.bytes).dict)
    const [x0, y0, x1, y1] = result.pixel_redactions[0]!.bounding_box
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) expect([after[(y * SIZE + x) * 3], after[(y * SIZE + x) * 3 + 1], after[(y * SIZE + x) * 3 + 2]]).toEqual([0, 0, 0])
    const red = new Uint8Array(SIZE * SIZE).map((_, i) => after[i * 3]!)
    const text = await frameText(red)
    for (const gone of ["SMITH", "6789"]) expect(text).not.toContain(gone)
    expect(text).toContain("AXIAL")
  })

  it("multi-frame: each frame is read and cleaned at its own offset", async () => {
    const frame = await burnedInFrame()
    const blank = new Uint8Array(SIZE * SIZE).fill(40)
    const input = buildDicom({ pixels: new Uint8Array([...blank, ...frame]), image: { NumberOfFrames: "2" } })
    const result = await run(input, "redact", true)
    expect(result.pixel_redactions.length).toBeGreaterThanOrEqual(3)
    const after = pixelsOf(read(result.bytes).dict)
    expect(after.subarray(0, SIZE * SIZE)).toEqual(blank)
    const text = await frameText(after.slice(SIZE * SIZE))
    for (const gone of ["SMITH", "6789"]) expect(text).not.toContain(gone)
    expect(text).toContain("AXIAL")
  })

  it("compressed pixel data is not read; a warning finding says so", async () => {
    const meta = DicomMetaDictionary.denaturalizeDataset({
      FileMetaInformationVersion: new Uint8Array([0, 1]).buffer,
      MediaStorageSOPClassUID: SECONDARY_CAPTURE,
      MediaStorageSOPInstanceUID: UIDS.instance,
      TransferSyntaxUID: "1.2.840.10008.1.2.5",
      ImplementationClassUID: "1.2.826.0.1.3680043.9999.1",
    })
    const file = new DicomDict(meta)
    file.dict = DicomMetaDictionary.denaturalizeDataset({
      PatientName: PATIENT.PatientName,
      SOPClassUID: SECONDARY_CAPTURE,
      SOPInstanceUID: UIDS.instance,
      Rows: 8,
      Columns: 8,
      SamplesPerPixel: 1,
      PhotometricInterpretation: "MONOCHROME2",
      BitsAllocated: 8,
      BitsStored: 8,
      HighBit: 7,
      PixelRepresentation: 0,
      PixelData: [new Uint8Array(64).buffer],
      _vrMap: { PixelData: "OB" },
    })
    const result = await run(new Uint8Array(file.write()), "redact", true)
    expect(result.findings).toContainEqual(expect.objectContaining({ entity_type: "dicom_pixel_not_scanned", severity: "warning" }))
    expect(result.pixel_redactions).toEqual([])
    expect(latin1(result.bytes)).not.toContain(PATIENT.PatientName)
  })
})
