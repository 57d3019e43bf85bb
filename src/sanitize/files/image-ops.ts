/**
 * What the decoder worker does with sharp. `read`: the image decoded (BMP through mupdf) and
 * encoded losslessly as PNG for the OCR. `paint`: decoded again, the boxes painted black, encoded
 * in the original format (BMP by our encoder). Decoding twice keeps no raster alive between the
 * two: in between, the OCR runs elsewhere for as long as it takes. Plain erasable TypeScript.
 */
import sharp from "sharp"

const sibling = (name: string) => new URL(import.meta.url.endsWith(".ts") ? `./${name}.ts` : `./${name}.js`, import.meta.url).href
const budgets: typeof import("./budgets.js") = await import(sibling("budgets"))
const { CorruptFile, LimitExceeded }: typeof import("./errors.js") = await import(sibling("errors"))
const { encodeBmp }: typeof import("./bmp.js") = await import(sibling("bmp"))

// libvips keeps recent operations and their images for reuse; every upload is a new image.
sharp.cache(false)

export type ImageType = "jpeg" | "png" | "gif" | "bmp" | "tiff"
export type Box = [number, number, number, number]

/** Margin around a word's box, so anti-aliased edges go too. */
const PAD = 2

const open = async (bytes: Uint8Array, type: ImageType) => {
  if (type !== "bmp") return sharp(bytes, { failOn: "error", limitInputPixels: budgets.MAX_IMAGE_PIXELS })
  const mupdf: typeof import("./pdf-ops.js") = await import(sibling("pdf-ops"))
  const image = mupdf.decodeImage(bytes)
  return sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels as 3 | 4 } })
}

/** sharp's and mupdf's errors as ours: a pixel limit passed, or an unreadable file. */
const decoding = async <A>(type: ImageType, work: () => Promise<A>): Promise<A> => {
  try {
    return await work()
  } catch (cause) {
    if (cause instanceof LimitExceeded || cause instanceof CorruptFile) throw cause
    const message = String((cause as Error)?.message ?? cause)
    if (/pixel limit/i.test(message)) throw new LimitExceeded("pixels", budgets.MAX_IMAGE_PIXELS)
    throw new CorruptFile(`the ${type} image cannot be decoded: ${message}`)
  }
}

export const read = (bytes: Uint8Array, type: ImageType) =>
  decoding(type, async () => {
    const { data, info } = await (await open(bytes, type)).removeAlpha().png().toBuffer({ resolveWithObject: true })
    return { width: info.width, height: info.height, png: new Uint8Array(data) }
  })

/** Black rectangles over the boxes (plus the margin), clipped to the image. */
export const blackTiles = (boxes: ReadonlyArray<Box>, width: number, height: number) =>
  boxes.flatMap(([x0, y0, x1, y1]) => {
    const left = Math.max(0, Math.floor(x0) - PAD)
    const top = Math.max(0, Math.floor(y0) - PAD)
    const w = Math.min(width, Math.ceil(x1) + PAD) - left
    const h = Math.min(height, Math.ceil(y1) + PAD) - top
    return w > 0 && h > 0 ? [{ input: { create: { width: w, height: h, channels: 3 as const, background: { r: 0, g: 0, b: 0 } } }, left, top }] : []
  })

export const paint = (bytes: Uint8Array, type: ImageType, boxes: ReadonlyArray<Box>) =>
  decoding(type, async () => {
    const { data, info } = await (await open(bytes, type)).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    const raw = { raw: { width: info.width, height: info.height, channels: info.channels as 1 | 2 | 3 | 4 } }
    const painted = sharp(data, raw).composite(blackTiles(boxes, info.width, info.height))
    if (type === "bmp") {
      const rgb = await painted.removeAlpha().raw().toBuffer({ resolveWithObject: true })
      return encodeBmp(rgb.info.width, rgb.info.height, rgb.data, rgb.info.channels)
    }
    const encoded = type === "jpeg" ? painted.jpeg({ quality: 92 }) : type === "gif" ? painted.gif() : type === "tiff" ? painted.tiff() : painted.png()
    return new Uint8Array(await encoded.toBuffer())
  })
