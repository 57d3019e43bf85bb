/**
 * File sanitize end to end (spec 002 "Sanitize"): images and PDFs generated here with known words,
 * sanitized through the route, downloaded once, and read back (OCR of the output, mupdf text
 * extraction) to prove the words are gone; type by leading bytes; the 50 MB cap while streaming;
 * single-use, expiring tokens; the OCR pool's queue limit under a burst.
 */
import { connect } from "node:net"
import dcmjs from "dcmjs"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import sharp, { type Sharp } from "sharp"
import { afterAll, describe, expect, it } from "vitest"
import { encodeBmp } from "../src/sanitize/files/bmp.js"
import { openImage } from "../src/sanitize/files/image.js"
import { makeOcrPool } from "../src/sanitize/files/ocr.js"
import { SanitizeFiles } from "../src/sanitize/files/service.js"
import { call, registerOrg } from "./support/client.js"
import { startFakeLlm } from "./support/fake-llm.js"
import { useFixture } from "./support/fixture.js"
import { makePdf, pdfText, renderPage, textImage } from "./support/sanitize-files.js"
import { startServer, useServer } from "./support/server.js"

const llm = useFixture(startFakeLlm, (fake) => fake.close())
// The fake model listens on plain HTTP on loopback.
const server = useServer({ OUTBOUND_ALLOW_PRIVATE: "127.0.0.0/8", OUTBOUND_ALLOW_HTTP: "true", SANITIZE_AI_TIMEOUT_MS: "2000" })
const org = useFixture(() => registerOrg(server.url, "Scans Inc"))
/** Reads the outputs back, as an attacker with the file would. */
const reader = makeOcrPool({ workers: 1 })
afterAll(() => reader.close())

const EMAIL = "john.doe@example.com"
const SSN = "123-45-6789"
const KEPT = "Quarterly"

interface Part {
  readonly name: string
  readonly value: string | Uint8Array
  readonly filename?: string
}

const form = (parts: ReadonlyArray<Part>) => {
  const data = new FormData()
  for (const part of parts) {
    if (typeof part.value === "string") data.append(part.name, part.value)
    else data.append(part.name, new Blob([part.value]), part.filename ?? "upload.bin")
  }
  return data
}

const upload = async (file: Uint8Array, filename: string, fields: Record<string, string> = {}, token = org.key) => {
  const response = await fetch(`${server.url}/api/v1/sanitize/file`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: form([{ name: "file", value: file, filename }, ...Object.entries(fields).map(([name, value]) => ({ name, value }))])
  })
  return { status: response.status, headers: response.headers, body: (await response.json()) as any }
}

const download = async (token: string) => {
  const response = await fetch(`${server.url}/api/v1/sanitize/file/${token}/download`)
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

const withSql = <A, E>(query: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) => Effect.flatMap(SqlClient.SqlClient, query)

const ocrText = async (image: Uint8Array) => (await reader.ocr(new Uint8Array(await sharp(image).png().toBuffer()))).text

const scanLines = [`${KEPT} report for ${EMAIL} today`, `SSN ${SSN} on file`]

describe("images", () => {
  it("a PNG's e-mail and SSN are blacked out: the download no longer OCRs them, and is single use", async () => {
    const png = await textImage(scanLines)
    expect(await ocrText(png)).toContain(EMAIL)
    const reply = await upload(png, "scan.png", { include_pixel_redaction: "true" })
    expect(reply.status).toBe(200)
    const body = reply.body
    expect(body).toMatchObject({ file_type: "png", original_filename: "scan.png", blocked: false, mode: "redact", policy: "default", tokenized_text: null, token_mapping: null, dicom_tag_actions: [] })
    expect(body.input_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(body.output_hash).not.toBe(body.input_hash)
    expect(body.download_url).toBe(`${server.url}/api/v1/sanitize/file/${body.download_token}/download`)
    expect(body.findings.map((f: any) => f.action_taken)).toContain("redacted")
    // Named by their markers: the answer itself carries no sensitive text.
    const found = body.pixel_redactions.map((p: any) => p.text_found)
    expect(found.some((text: string) => /EMAIL/.test(text))).toBe(true)
    expect(found.some((text: string) => /SSN/.test(text))).toBe(true)
    expect(JSON.stringify(body)).not.toContain(EMAIL)
    expect(JSON.stringify(body)).not.toContain(SSN)
    for (const p of body.pixel_redactions) {
      expect(p.bounding_box).toHaveLength(4)
      expect(p.confidence).toBeGreaterThan(0)
      expect(p.confidence).toBeLessThanOrEqual(1)
    }
    const file = await download(body.download_token)
    expect(file.status).toBe(200)
    expect(file.headers.get("content-type")).toBe("image/png")
    expect(file.headers.get("content-disposition")).toBe('attachment; filename="sanitized_scan.png"')
    expect(Number(file.headers.get("content-length"))).toBe(file.bytes.length)
    const seen = await ocrText(file.bytes)
    expect(seen).not.toContain(EMAIL)
    expect(seen).not.toContain(SSN)
    expect(seen).not.toContain("6789")
    expect(seen).toContain(KEPT)
    expect((await download(body.download_token)).status).toBe(404)
  })

  for (const [format, encode] of [
    ["jpeg", (image: Sharp) => image.jpeg({ quality: 95 })],
    ["tiff", (image: Sharp) => image.tiff()],
    ["gif", (image: Sharp) => image.gif()]
  ] as const) {
    it(`a ${format.toUpperCase()} is tokenized: token_mapping holds the originals, the image loses them`, async () => {
      const bytes = new Uint8Array(await encode(sharp(await textImage(scanLines))).toBuffer())
      const reply = await upload(bytes, `page.${format}`, { mode: "tokenize" })
      expect(reply.status).toBe(200)
      expect(reply.body.file_type).toBe(format)
      expect(Object.values(reply.body.token_mapping)).toEqual(expect.arrayContaining([EMAIL, SSN]))
      expect(reply.body.tokenized_text).toMatch(/<EMAIL[A-Z_]*_\d{3}>/)
      expect(reply.body.tokenized_text).not.toContain(EMAIL)
      const file = await download(reply.body.download_token)
      expect(file.headers.get("content-type")).toBe(`image/${format}`)
      expect(file.headers.get("content-disposition")).toBe(`attachment; filename="sanitized_page.${format === "jpeg" ? "jpg" : format}"`)
      const seen = await ocrText(file.bytes)
      expect(seen).not.toContain(EMAIL)
      expect(seen).not.toContain(SSN)
    })
  }

  it("a BMP (decoded by mupdf, written back as BMP) is redacted too", async () => {
    const { data, info } = await sharp(await textImage(scanLines)).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    const bmp = encodeBmp(info.width, info.height, data, info.channels)
    const reply = await upload(bmp, "fax.bmp")
    expect(reply.status).toBe(200)
    expect(reply.body.file_type).toBe("bmp")
    const file = await download(reply.body.download_token)
    expect(file.headers.get("content-type")).toBe("image/bmp")
    expect(Buffer.from(file.bytes.subarray(0, 2)).toString("latin1")).toBe("BM")
    // sharp reads no BMP: decode the output the way the service does.
    const decoded = await openImage(file.bytes, "bmp")
    const seen = (await reader.ocr(decoded.png)).text
    expect(seen).not.toContain(EMAIL)
    expect(seen).toContain(KEPT)
  })

  it("block answers 200 blocked with no download; flag reports and hands nothing back", async () => {
    const png = await textImage(scanLines)
    const blocked = await upload(png, "scan.png", { mode: "block" })
    expect(blocked.status).toBe(200)
    expect(blocked.body).toMatchObject({ blocked: true, download_token: null, download_url: null, pixel_redactions: [] })
    expect(blocked.body.findings.every((f: any) => f.action_taken === "blocked")).toBe(true)
    const flagged = await upload(png, "scan.png", { mode: "flag" })
    expect(flagged.status).toBe(200)
    expect(flagged.body).toMatchObject({ blocked: false, download_token: null, pixel_redactions: [] })
    expect(flagged.body.output_hash).toBe(flagged.body.input_hash)
    expect(flagged.body.findings.length).toBeGreaterThan(0)
  })

  it("the audit trail records the run (type, size, hashes, counts), never the content", async () => {
    const reply = await upload(await textImage(scanLines), "audit.png")
    const rows = await server.run(
      withSql((sql) => sql<{ details: any; event: string }>`SELECT event, details FROM audit_log WHERE org_uuid = ${org.orgUuid} AND event = 'sanitize.file'`)
    )
    const entry = rows.find((row) => row.details.input_hash === reply.body.input_hash)
    expect(entry?.details).toMatchObject({ file_type: "png", mode: "redact", output_hash: reply.body.output_hash })
    expect(entry?.details.size_bytes).toBeGreaterThan(0)
    expect(JSON.stringify(rows)).not.toContain(EMAIL)
    expect(JSON.stringify(rows)).not.toContain(SSN)
  })
})

describe("PDFs", () => {
  it("detected text is removed from the text layer (not covered), and a scanned page is OCR'd and blacked out", async () => {
    const scan = await textImage([`Scanned ${EMAIL} here`, `SSN ${SSN} end`])
    const pdf = makePdf([[`${KEPT} statement for ${EMAIL}`, `Reference SSN ${SSN} attached`], ["nothing sensitive on this page"]], scan)
    expect(pdfText(pdf).join("")).toContain(EMAIL)
    const reply = await upload(pdf, "statement.pdf", { mode: "tokenize" })
    expect(reply.status).toBe(200)
    expect(reply.body.file_type).toBe("pdf")
    expect(reply.body.tokenized_text).toContain(KEPT)
    expect(reply.body.tokenized_text).not.toContain(EMAIL)
    expect(Object.values(reply.body.token_mapping)).toEqual(expect.arrayContaining([EMAIL, SSN]))
    // The scanned page's words were found by OCR and blacked out.
    expect(reply.body.pixel_redactions.length).toBeGreaterThan(0)
    const file = await download(reply.body.download_token)
    expect(file.headers.get("content-type")).toBe("application/pdf")
    expect(file.headers.get("content-disposition")).toBe('attachment; filename="sanitized_statement.pdf"')
    const pages = pdfText(file.bytes)
    expect(pages).toHaveLength(3)
    expect(pages.join("")).not.toContain(EMAIL)
    expect(pages.join("")).not.toContain(SSN)
    expect(pages[0]).toContain(KEPT)
    expect(pages[1]).toContain("nothing sensitive")
    // Neither the raw bytes nor a rendering show them.
    expect(Buffer.from(file.bytes).toString("latin1")).not.toContain(EMAIL)
    for (const index of [0, 2]) {
      const seen = (await reader.ocr(renderPage(file.bytes, index, 3))).text
      expect(seen).not.toContain(EMAIL)
      expect(seen).not.toContain(SSN)
    }
  })

  it("a truncated PDF is 422 CORRUPT_FILE", async () => {
    const pdf = makePdf([["hello"]])
    const reply = await upload(pdf.subarray(0, 20), "broken.pdf")
    expect(reply.status).toBe(422)
    expect(reply.body.code).toBe("CORRUPT_FILE")
  })
})

describe("AI second pass (ai_model)", () => {
  const PERSON = "Zorblax Quentavius"
  const ACCOUNT = "ACCT-7731-XQ"
  const withModel = async (path: string) => {
    const reply = await call(server.url, "POST", "/api/v1/models/custom", { token: org.key, body: { name: path, model_id: `files-${path.replace(/\//g, "-")}`, endpoint_url: `${llm.url}/${path}/v1` } })
    expect(reply.status).toBe(201)
    return `custom:files-${path.replace(/\//g, "-")}`
  }

  it("what the model finds is removed from the PDF too, marked source ai; the model never sees what the rules removed", async () => {
    const model = await withModel("sanitize")
    const before = llm.calls.length
    const pdf = makePdf([[`${PERSON} wired the funds to ${ACCOUNT}`, `and wrote to ${EMAIL} about it`]])
    const reply = await upload(pdf, "wire.pdf", { ai_model: model, mode: "tokenize" })
    expect(reply.status).toBe(200)
    const ai = reply.body.findings.filter((f: any) => f.source === "ai")
    expect(ai.map((f: any) => f.entity_type).sort()).toEqual(["account_number", "ner_person"])
    expect(Object.values(reply.body.token_mapping)).toEqual(expect.arrayContaining([PERSON, ACCOUNT, EMAIL]))
    expect(reply.body.tokenized_text).not.toContain(ACCOUNT)
    expect(JSON.stringify(llm.calls.slice(before).map((c) => c.body))).not.toContain(EMAIL)
    const text = pdfText((await download(reply.body.download_token)).bytes).join("")
    expect(text).not.toContain(ACCOUNT)
    expect(text).not.toContain("Quentavius")
    expect(text).toContain("wired the funds")
  })

  it("a failing or unknown model leaves the rule-based result", async () => {
    const pdf = makePdf([[`${PERSON} wired the funds to ${ACCOUNT}`, `and wrote to ${EMAIL} about it`]])
    for (const model of [await withModel("error"), "custom:nope"]) {
      const reply = await upload(pdf, "wire.pdf", { ai_model: model })
      expect(reply.status).toBe(200)
      expect(reply.body.findings.filter((f: any) => f.source === "ai")).toEqual([])
      const text = pdfText((await download(reply.body.download_token)).bytes).join("")
      expect(text).toContain(ACCOUNT)
      expect(text).not.toContain(EMAIL)
    }
  })
})

describe("refusals", () => {
  it("type comes from the leading bytes: a text file named .png is 415", async () => {
    const reply = await upload(new TextEncoder().encode("just some text, not an image"), "photo.png")
    expect(reply.status).toBe(415)
    expect(reply.body.code).toBe("UNSUPPORTED_FILE_TYPE")
    expect(reply.body.request_id).toBeTruthy()
  })

  it("an empty file is 422 EMPTY_FILE; a truncated PNG is 422 CORRUPT_FILE; no file part is 422", async () => {
    const empty = await upload(new Uint8Array(0), "empty.png")
    expect(empty.status).toBe(422)
    expect(empty.body.code).toBe("EMPTY_FILE")
    const png = await textImage(["truncated"])
    const truncated = await upload(png.subarray(0, 60), "cut.png")
    expect(truncated.status).toBe(422)
    expect(truncated.body.code).toBe("CORRUPT_FILE")
    const response = await fetch(`${server.url}/api/v1/sanitize/file`, { method: "POST", headers: { authorization: `Bearer ${org.key}` }, body: form([{ name: "mode", value: "redact" }]) })
    expect(response.status).toBe(422)
    expect(((await response.json()) as any).code).toBe("VALIDATION_ERROR")
  })

  it("an unknown policy or mode is 422 VALIDATION_ERROR", async () => {
    const png = await textImage(["x"])
    expect((await upload(png, "a.png", { policy: "gdpr" })).body.code).toBe("VALIDATION_ERROR")
    expect((await upload(png, "a.png", { mode: "shred" })).status).toBe(422)
    expect((await upload(png, "a.png", { include_pixel_redaction: "maybe" })).status).toBe(422)
  })

  it("needs a credential with the sanitize:write scope", async () => {
    const png = await textImage(["x"])
    const anonymous = await fetch(`${server.url}/api/v1/sanitize/file`, { method: "POST", body: form([{ name: "file", value: png }]) })
    expect(anonymous.status).toBe(401)
    const limited = await call(server.url, "POST", "/api/v1/api-keys", { token: org.token, body: { name: "reader", scopes: ["actions:read"] } })
    expect((await upload(png, "a.png", {}, limited.body.key)).status).toBe(403)
    // A JWT works as well as an API key.
    expect((await upload(png, "a.png", { mode: "flag" }, org.token)).status).toBe(200)
  })
})

/** Sends raw bytes over one connection; answers what came back before close or `waitMs`. */
const rawExchange = (port: number, head: string, body: (write: (chunk: Buffer) => boolean) => Promise<void>, waitMs = 5000) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    let received = ""
    const finish = () => {
      socket.destroy()
      resolve(received)
    }
    socket.on("data", (data) => {
      received += data.toString("latin1")
    })
    socket.on("close", finish)
    socket.on("error", finish)
    socket.on("connect", async () => {
      socket.write(head)
      await body((chunk) => socket.write(chunk)).catch(() => {})
      setTimeout(finish, waitMs)
    })
  })

/** A minimal Part 10 file: patient tags and one 8-bit frame (64×64 black unless given). */
const dicomFile = (frame: { pixels: Uint8Array; rows: number; columns: number } = { pixels: new Uint8Array(64 * 64), rows: 64, columns: 64 }) => {
  const { DicomDict, DicomMetaDictionary } = dcmjs.data
  const uid = "1.2.826.0.1.3680043.9999.15.1"
  const meta = DicomMetaDictionary.denaturalizeDataset({
    FileMetaInformationVersion: new Uint8Array([0, 1]).buffer,
    MediaStorageSOPClassUID: "1.2.840.10008.5.1.4.1.1.7",
    MediaStorageSOPInstanceUID: uid,
    TransferSyntaxUID: "1.2.840.10008.1.2.1",
    ImplementationClassUID: "1.2.826.0.1.3680043.9999.1"
  })
  const file = new DicomDict(meta)
  file.dict = DicomMetaDictionary.denaturalizeDataset({
    PatientName: "QUIMBY^HORTENSE",
    PatientID: "MRN55501234",
    PatientBirthDate: "19710203",
    Modality: "OT",
    SOPClassUID: "1.2.840.10008.5.1.4.1.1.7",
    SOPInstanceUID: uid,
    StudyInstanceUID: `${uid}.1`,
    SeriesInstanceUID: `${uid}.2`,
    Rows: frame.rows,
    Columns: frame.columns,
    SamplesPerPixel: 1,
    PhotometricInterpretation: "MONOCHROME2",
    BitsAllocated: 8,
    BitsStored: 8,
    HighBit: 7,
    PixelRepresentation: 0,
    PixelData: frame.pixels.slice().buffer,
    _vrMap: { PixelData: "OB" }
  })
  return new Uint8Array(file.write())
}

describe("DICOM", () => {
  it("goes through the route: patient tags de-identified with hashes only, the cleaned file downloadable once", async () => {
    const reply = await upload(dicomFile(), "study.dcm")
    expect(reply.status).toBe(200)
    expect(reply.body.file_type).toBe("dicom")
    const actions = reply.body.dicom_tag_actions
    expect(actions.length).toBeGreaterThan(0)
    expect(JSON.stringify(reply.body)).not.toContain("QUIMBY")
    expect(JSON.stringify(reply.body)).not.toContain("MRN55501234")
    const name = actions.find((a: any) => a.tag_name === "PatientName")
    expect(name?.original_hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    const file = await download(reply.body.download_token)
    expect(file.status).toBe(200)
    expect(file.headers.get("content-type")).toBe("application/dicom")
    expect(file.headers.get("content-disposition")).toBe('attachment; filename="sanitized_study.dcm"')
    const text = Buffer.from(file.bytes).toString("latin1")
    expect(text.slice(128, 132)).toBe("DICM")
    expect(text).not.toContain("QUIMBY")
    expect(text).not.toContain("MRN55501234")
  })

  it("burned-in text is found by the gateway's OCR pool and blacked out when include_pixel_redaction is set", async () => {
    const { data, info } = await sharp(await textImage(scanLines)).grayscale().raw().toBuffer({ resolveWithObject: true })
    const reply = await upload(dicomFile({ pixels: new Uint8Array(data), rows: info.height, columns: info.width }), "burned.dcm", { include_pixel_redaction: "true" })
    expect(reply.status).toBe(200)
    expect(reply.body.pixel_redactions.length).toBeGreaterThan(0)
    expect(JSON.stringify(reply.body)).not.toContain(EMAIL)
    const file = await download(reply.body.download_token)
    const cleaned = (dcmjs.data.DicomMessage.readFile(file.bytes.buffer.slice(file.bytes.byteOffset, file.bytes.byteOffset + file.bytes.byteLength)) as any).dict
    const pixels = new Uint8Array(cleaned["7FE00010"].Value[0])
    const seen = (await reader.ocr(new Uint8Array(await sharp(pixels, { raw: { width: info.width, height: info.height, channels: 1 } }).png().toBuffer()))).text
    expect(seen).not.toContain(EMAIL)
    expect(seen).toContain(KEPT)
  })

  it("a file with DICM but nothing readable after it is 422 CORRUPT_FILE", async () => {
    const broken = new Uint8Array(200)
    broken.set(new TextEncoder().encode("DICM"), 128)
    const reply = await upload(broken, "broken.dcm")
    expect(reply.status).toBe(422)
    expect(reply.body.code).toBe("CORRUPT_FILE")
  })
})

describe("the 50 MB cap", () => {
  const CAP = 50 * 1024 * 1024
  const boundary = "----capboundary"
  const multipart = (size: number) => {
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const filler = size - head.length - tail.length
    return { head, tail, filler }
  }

  it("a body of 50 MB + 1 byte is refused with 413 while it streams (chunked, no length declared)", async () => {
    const { head, tail, filler } = multipart(CAP + 1)
    const port = Number(new URL(server.url).port)
    let sentBeforeAnswer = 0
    let answered = false
    const headers = `POST /api/v1/sanitize/file HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nTransfer-Encoding: chunked\r\n\r\n`
    const answer = await rawExchange(port, headers, async (write) => {
      const chunk = (bytes: Buffer) => write(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]))
      chunk(head)
      const block = Buffer.alloc(1024 * 1024, 0x41)
      let left = filler
      while (left > 0 && !answered) {
        const piece = left >= block.length ? block : block.subarray(0, left)
        chunk(piece)
        sentBeforeAnswer += piece.length
        left -= piece.length
        await new Promise((r) => setImmediate(r))
      }
      chunk(tail)
      write(Buffer.from("0\r\n\r\n"))
    })
    answered = true
    expect(answer).toMatch(/^HTTP\/1\.1 413/)
    expect(answer).toContain("PAYLOAD_TOO_LARGE")
    expect(sentBeforeAnswer).toBeLessThanOrEqual(filler)
  })

  it("a declared length of 50 MB + 1 byte is refused with 413 before the body is sent", async () => {
    const port = Number(new URL(server.url).port)
    const headers = `POST /api/v1/sanitize/file HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${CAP + 1}\r\n\r\n`
    const started = Date.now()
    const answer = await rawExchange(port, headers, async (write) => {
      write(multipart(CAP + 1).head)
    }, 1500)
    expect(answer).toMatch(/^HTTP\/1\.1 413/)
    expect(answer).toContain("PAYLOAD_TOO_LARGE")
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it("a body of exactly 50 MB passes the cap and is judged by its content (not an image: 415)", async () => {
    const { head, tail, filler } = multipart(CAP)
    const body = Buffer.concat([head, Buffer.alloc(filler, 0x41), tail])
    expect(body.length).toBe(CAP)
    const response = await fetch(`${server.url}/api/v1/sanitize/file`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      body
    })
    expect(response.status).toBe(415)
    expect(((await response.json()) as any).code).toBe("UNSUPPORTED_FILE_TYPE")
  }, 60_000)
})

describe("download tokens", () => {
  it("an unknown, malformed or expired token is 404; the sweeper deletes expired files", async () => {
    expect((await download("sft_" + "A".repeat(43))).status).toBe(404)
    expect((await download("not-a-token")).status).toBe(404)
    const reply = await upload(await textImage(scanLines), "old.png")
    const sql = (query: (sql: SqlClient.SqlClient) => Effect.Effect<any, any>) => server.run(withSql(query))
    await sql((s) => s`UPDATE sanitized_files SET expires_at = now() - interval '1 second' WHERE org_uuid = ${org.orgUuid}`)
    expect((await download(reply.body.download_token)).status).toBe(404)
    const swept = await server.run(Effect.flatMap(SanitizeFiles, (files) => files.sweep))
    expect(swept).toBeGreaterThanOrEqual(1)
    const left = await sql((s) => s`SELECT count(*)::int AS n FROM sanitized_files WHERE expires_at <= now()`)
    expect(left[0].n).toBe(0)
  })

  it("the token is the only credential, and nothing of it is stored in the clear", async () => {
    const reply = await upload(await textImage(scanLines), "kept.png")
    const token: string = reply.body.download_token
    expect(token).toMatch(/^sft_[A-Za-z0-9_-]{43}$/)
    const rows = await server.run(withSql((s) => s`SELECT * FROM sanitized_files`))
    expect(JSON.stringify(rows)).not.toContain(token.slice(4))
    // Two downloads at once: exactly one wins.
    const both = await Promise.all([download(token), download(token)])
    expect(both.map((r) => r.status).sort()).toEqual([200, 404])
  })
})

describe("the OCR pool", () => {
  it("answers 503 SERVER_BUSY with Retry-After beyond its queue limit, and keeps serving", async () => {
    const busy = await startServer({ SANITIZE_OCR_WORKERS: "1", SANITIZE_OCR_QUEUE: "1" })
    try {
      const owner = await registerOrg(busy.url, "Burst")
      const png = await textImage(scanLines)
      const send = () =>
        fetch(`${busy.url}/api/v1/sanitize/file`, { method: "POST", headers: { authorization: `Bearer ${owner.key}` }, body: form([{ name: "file", value: png, filename: "b.png" }]) })
      const replies = await Promise.all(Array.from({ length: 6 }, send))
      const statuses = replies.map((r) => r.status)
      expect(statuses).toContain(200)
      expect(statuses).toContain(503)
      const refused = replies.find((r) => r.status === 503)!
      expect(refused.headers.get("retry-after")).toBe("5")
      expect(((await refused.json()) as any).code).toBe("SERVER_BUSY")
      expect((await call(busy.url, "GET", "/health")).status).toBe(200)
      expect((await send()).status).toBe(200)
    } finally {
      await busy.stop()
    }
  }, 120_000)
})
