/**
 * An image's declared size, read from its header alone: PNG IHDR, the JPEG frame header, the GIF
 * screen and first frame, the BMP info header; TIFF through sharp's metadata (libvips reads the
 * directory, not the strips). Nothing is decoded: this is what the budgets are checked against
 * before any decoder sees the file.
 */
import { loadOnce } from "../../platform/lazy.js"
import type { FileType } from "./detect.js"
import { CorruptFile } from "./errors.js"

/** Only TIFF needs sharp here; it loads with the first TIFF (libvips and its bindings, ~25 MB). */
const loadSharp = loadOnce(() => import("sharp"))

export interface DeclaredImage {
  readonly width: number
  readonly height: number
  /** Samples per pixel once decoded (a palette counts as RGB). */
  readonly channels: number
  readonly bytesPerSample: number
}

const truncated = (type: string) => new CorruptFile(`the ${type} header is truncated or malformed`)

const checked = (type: string, image: DeclaredImage): DeclaredImage => {
  const valid = (n: number) => Number.isSafeInteger(n) && n > 0
  if (!valid(image.width) || !valid(image.height)) throw new CorruptFile(`the ${type} header declares no size`)
  return image
}

/** Samples per pixel by PNG colour type (palette → RGB). */
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 3, 4: 2, 6: 4 }

export const pngHeader = (bytes: Uint8Array): DeclaredImage => {
  // Signature (8), then the first chunk must be IHDR: length 13, type, width, height, depth, colour type.
  if (bytes.length < 33 || Buffer.from(bytes.subarray(12, 16)).toString("latin1") !== "IHDR") throw truncated("png")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const channels = PNG_CHANNELS[bytes[25]!]
  if (channels === undefined) throw truncated("png")
  return checked("png", { width: view.getUint32(16), height: view.getUint32(20), channels, bytesPerSample: bytes[24] === 16 ? 2 : 1 })
}

/** Start-of-frame markers: C0–CF except DHT (C4), JPG (C8) and DAC (CC). */
const isFrameMarker = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc

export const jpegHeader = (bytes: Uint8Array): DeclaredImage => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = 2
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) throw truncated("jpeg")
    const marker = bytes[at + 1]!
    // Fill bytes, and markers without a length (RSTn, TEM).
    if (marker === 0xff) {
      at++
      continue
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      at += 2
      continue
    }
    if (marker === 0xda || marker === 0xd9) break
    const length = view.getUint16(at + 2)
    if (length < 2) throw truncated("jpeg")
    if (isFrameMarker(marker)) {
      if (at + 10 > bytes.length) break
      const bits = bytes[at + 4]!
      return checked("jpeg", { height: view.getUint16(at + 5), width: view.getUint16(at + 7), channels: bytes[at + 9]!, bytesPerSample: bits > 8 ? 2 : 1 })
    }
    at += 2 + length
  }
  throw truncated("jpeg")
}

export const gifHeader = (bytes: Uint8Array): DeclaredImage => {
  if (bytes.length < 13) throw truncated("gif")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let width = view.getUint16(6, true)
  let height = view.getUint16(8, true)
  const flags = bytes[10]!
  let at = 13 + (flags & 0x80 ? 3 << ((flags & 7) + 1) : 0)
  // Extensions (0x21, label, sub-blocks up to a zero length) until the first image descriptor (0x2C).
  while (at < bytes.length && bytes[at] === 0x21) {
    at += 2
    while (at < bytes.length && bytes[at] !== 0) at += bytes[at]! + 1
    at++
  }
  if (at + 9 < bytes.length && bytes[at] === 0x2c) {
    // A frame may reach past the logical screen; the decoder's canvas then grows with it.
    width = Math.max(width, view.getUint16(at + 1, true) + view.getUint16(at + 5, true))
    height = Math.max(height, view.getUint16(at + 3, true) + view.getUint16(at + 7, true))
  }
  return checked("gif", { width, height, channels: 4, bytesPerSample: 1 })
}

export const bmpHeader = (bytes: Uint8Array): DeclaredImage => {
  if (bytes.length < 26) throw truncated("bmp")
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const infoSize = view.getUint32(14, true)
  // BITMAPCOREHEADER (12 bytes) has 16-bit sizes; the later headers signed 32-bit ones, a negative
  // height meaning rows stored top-down. Any other header size is read as the later kind: if the
  // decoder cannot read it either, it says so once the size passed.
  if (infoSize === 12) return checked("bmp", { width: view.getUint16(18, true), height: view.getUint16(20, true), channels: 3, bytesPerSample: 1 })
  const bits = bytes.length >= 30 ? view.getUint16(28, true) : 24
  return checked("bmp", { width: view.getInt32(18, true), height: Math.abs(view.getInt32(22, true)), channels: bits === 32 ? 4 : 3, bytesPerSample: 1 })
}

/** Bytes per sample by libvips band format. */
const SAMPLE_BYTES: Record<string, number> = { uchar: 1, char: 1, ushort: 2, short: 2, uint: 4, int: 4, float: 4 }

const tiffHeader = async (bytes: Uint8Array): Promise<DeclaredImage> => {
  const { default: sharp } = await loadSharp()
  try {
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata()
    return checked("tiff", { width: meta.width ?? 0, height: meta.height ?? 0, channels: meta.channels ?? 3, bytesPerSample: SAMPLE_BYTES[meta.depth ?? "uchar"] ?? 8 })
  } catch (cause) {
    if (cause instanceof CorruptFile) throw cause
    throw truncated("tiff")
  }
}

/** The declared size of an image of a type `detectFileType` named. */
export const declaredImage = async (bytes: Uint8Array, type: Exclude<FileType, "pdf" | "dicom">): Promise<DeclaredImage> => {
  if (type === "png") return pngHeader(bytes)
  if (type === "jpeg") return jpegHeader(bytes)
  if (type === "gif") return gifHeader(bytes)
  if (type === "bmp") return bmpHeader(bytes)
  return tiffHeader(bytes)
}
