/**
 * What the decoder worker does with mupdf. `extract`: each page's characters with their boxes, or,
 * for a page without a text layer, the size it will be rendered at — checking first the page
 * count, then every image the page draws (declared /Width × /Height), the text and the pixels
 * against the budgets. `render`: one such page to PNG. `redact`: redaction annotations over the
 * given rectangles, APPLIED (the text under them is removed, not covered), and scanned pages
 * replaced by their blacked-out renderings. `decodeImage`: an image sharp cannot read (BMP) as
 * RGB. mupdf objects are destroyed when done, so their WebAssembly memory is freed at once rather
 * than when the garbage collector gets to them. Plain erasable TypeScript (loaded as it is).
 */
import * as mupdf from "mupdf"

const sibling = (name: string) => new URL(import.meta.url.endsWith(".ts") ? `./${name}.ts` : `./${name}.js`, import.meta.url).href
const budgets: typeof import("./budgets.js") = await import(sibling("budgets"))
const { CorruptFile, LimitExceeded }: typeof import("./errors.js") = await import(sibling("errors"))

export type Rect = [number, number, number, number]

export interface TextPage {
  readonly kind: "text"
  readonly text: string
  /** Four numbers (x0, y0, x1, y1) per UTF-16 unit of `text`; NaN for the line breaks we insert. */
  readonly boxes: Float32Array
  /** Raster bytes of the images the page draws (decoded if a redaction covers them). */
  readonly imageBytes: number
}
export interface ScannedPage {
  readonly kind: "scanned"
  readonly index: number
  /** Rendering scale: page points × scale = pixels. */
  readonly scale: number
  readonly width: number
  readonly height: number
  readonly imageBytes: number
}
export type ExtractedPage = TextPage | ScannedPage

export interface PageEdit {
  /** Rectangles in page points to redact from the text layer. */
  readonly rects: Rect[]
  /** A scanned page's redacted rendering: it replaces the page's content. */
  readonly png?: Uint8Array
}

const RENDER_SCALE = 2

/**
 * mupdf reports the limits it hit itself (an object nested past its stack, say) as "limit error"
 * messages, then carries on without the object: such a file is refused, since the part mupdf
 * skipped could hold text another reader shows. Other messages (repairs) are dropped unread.
 */
let limitHit = false
mupdf.setLog({
  error: (message) => {
    if (message.startsWith("limit error")) limitHit = true
  },
  warning: () => {}
})

const openPdf = (bytes: Uint8Array) => {
  const pdf = mupdf.Document.openDocument(bytes, "application/pdf").asPDF()
  if (pdf === null) throw new CorruptFile("not a PDF")
  return pdf
}

/** Samples per pixel mupdf may hold for an image (CMYK, or RGB with alpha). */
const IMAGE_CHANNELS = 4

interface Drawn {
  pixels: number
  readonly seen: Set<number>
}

const nameOf = (object: mupdf.PDFObject, key: string) => {
  const value = object.get(key)
  return value.isName() ? value.asName() : ""
}

/** An image dictionary's declared size, and its soft mask's. */
const countImage = (image: mupdf.PDFObject, drawn: Drawn) => {
  for (const part of [image, image.get("SMask"), image.get("Mask")]) {
    if (!part.isDictionary() && !part.isStream()) continue
    const width = part.get("Width")
    const height = part.get("Height")
    if (!width.isNumber() || !height.isNumber()) continue
    const pixels = Math.max(0, width.asNumber()) * Math.max(0, height.asNumber())
    if (pixels > budgets.MAX_IMAGE_PIXELS) throw new LimitExceeded("pixels", budgets.MAX_IMAGE_PIXELS)
    drawn.pixels += pixels
  }
}

/** Every image reachable from `resources`: XObjects, form XObjects' and tiling patterns' own resources, nested. */
const countResources = (resources: mupdf.PDFObject, depth: number, drawn: Drawn) => {
  if (!resources.isDictionary()) return
  if (depth > budgets.MAX_NESTING_DEPTH) throw new LimitExceeded("nesting_depth", budgets.MAX_NESTING_DEPTH)
  for (const kind of ["XObject", "Pattern"]) {
    const entries = resources.get(kind)
    if (!entries.isDictionary()) continue
    entries.forEach((value) => {
      countObject(value, depth, drawn)
    })
  }
}

const countObject = (value: mupdf.PDFObject, depth: number, drawn: Drawn) => {
  // Each indirect object once: shared images count once, and a form that draws itself ends here.
  if (value.isIndirect()) {
    if (drawn.seen.has(value.asIndirect())) return
    drawn.seen.add(value.asIndirect())
  }
  const object = value.resolve()
  if (nameOf(object, "Subtype") === "Image") countImage(object, drawn)
  countResources(object.get("Resources"), depth + 1, drawn)
}

/** Pixels of the images one page draws, annotations' appearances included. */
const pageImages = (page: mupdf.PDFPage): number => {
  const drawn: Drawn = { pixels: 0, seen: new Set() }
  const dictionary = page.getObject()
  countResources(dictionary.getInheritable("Resources"), 0, drawn)
  const annotations = dictionary.get("Annots")
  if (annotations.isArray())
    annotations.forEach((annotation) => {
      const normal = annotation.resolve().get("AP").get("N")
      if (normal.isStream()) countObject(normal, 0, drawn)
      else if (normal.isDictionary())
        normal.forEach((state) => {
          countObject(state, 0, drawn)
        })
    })
  return drawn.pixels
}

/** A growable run of four floats per character. */
const boxWriter = () => {
  let boxes = new Float32Array(4096)
  let used = 0
  return {
    push(x0: number, y0: number, x1: number, y1: number) {
      if (used + 4 > boxes.length) {
        const larger = new Float32Array(boxes.length * 2)
        larger.set(boxes)
        boxes = larger
      }
      boxes[used++] = x0
      boxes[used++] = y0
      boxes[used++] = x1
      boxes[used++] = y1
    },
    done: () => boxes.slice(0, used)
  }
}

/** The page's text and one box per UTF-16 unit, stopping as soon as a text budget is passed. */
const pageText = (page: mupdf.PDFPage, counted: { characters: number }) => {
  // Pieces joined once: appending character by character would leave a rope of one node per character.
  const pieces: string[] = []
  let length = 0
  const boxes = boxWriter()
  const stext = page.toStructuredText("preserve-whitespace")
  try {
    stext.walk({
      onChar(c, _origin, font, _size, q) {
        // The walk wraps each character's font in an object freed only by a finalizer, which a
        // synchronous walk never lets run: freed here, or a long text would fill the heap.
        font.destroy()
        if (length + c.length > budgets.MAX_PAGE_CHARACTERS) throw new LimitExceeded("page_characters", budgets.MAX_PAGE_CHARACTERS)
        counted.characters += c.length
        if (counted.characters > budgets.MAX_TEXT_CHARACTERS) throw new LimitExceeded("text_characters", budgets.MAX_TEXT_CHARACTERS)
        pieces.push(c)
        length += c.length
        const x0 = Math.min(q[0], q[2], q[4], q[6])
        const y0 = Math.min(q[1], q[3], q[5], q[7])
        const x1 = Math.max(q[0], q[2], q[4], q[6])
        const y1 = Math.max(q[1], q[3], q[5], q[7])
        for (let k = 0; k < c.length; k++) boxes.push(x0, y0, x1, y1)
      },
      endLine() {
        pieces.push("\n")
        length++
        boxes.push(Number.NaN, Number.NaN, Number.NaN, Number.NaN)
      }
    })
  } finally {
    stext.destroy()
  }
  return { text: pieces.join(""), boxes: boxes.done() }
}

export const extract = (bytes: Uint8Array): ExtractedPage[] => {
  limitHit = false
  const pdf = openPdf(bytes)
  try {
    const count = pdf.countPages()
    if (count > budgets.MAX_PAGES) throw new LimitExceeded("pages", budgets.MAX_PAGES)
    const counted = { characters: 0 }
    let scanned = 0
    let filePixels = 0
    const pages: ExtractedPage[] = []
    for (let index = 0; index < count; index++) {
      const page = pdf.loadPage(index) as mupdf.PDFPage
      try {
        const imagePixels = pageImages(page)
        const imageBytes = budgets.rasterBytes(imagePixels, IMAGE_CHANNELS)
        const { text, boxes } = pageText(page, counted)
        if (text.trim() !== "") {
          pages.push({ kind: "text", text, boxes, imageBytes })
          continue
        }
        if (++scanned > budgets.MAX_SCANNED_PAGES) throw new LimitExceeded("scanned_pages", budgets.MAX_SCANNED_PAGES)
        // 2× for legible OCR, less for a page so large that 2× would pass the pixel budget.
        const [x0, y0, x1, y1] = page.getBounds()
        const points = Math.max(1, (x1 - x0) * (y1 - y0))
        const scale = Math.min(RENDER_SCALE, Math.sqrt(budgets.MAX_IMAGE_PIXELS / points) * 0.99)
        const width = Math.ceil((x1 - x0) * scale) + 1
        const height = Math.ceil((y1 - y0) * scale) + 1
        // Rendering decodes the page's images as well as drawing the page.
        filePixels += width * height + imagePixels
        if (filePixels > budgets.MAX_FILE_PIXELS) throw new LimitExceeded("file_pixels", budgets.MAX_FILE_PIXELS)
        pages.push({ kind: "scanned", index, scale, width, height, imageBytes })
      } finally {
        page.destroy()
      }
    }
    if (limitHit) throw new LimitExceeded("nesting_depth", budgets.MAX_NESTING_DEPTH)
    return pages
  } finally {
    pdf.destroy()
  }
}

/** One page rendered to PNG at `scale`. */
export const render = (bytes: Uint8Array, index: number, scale: number) => {
  const pdf = openPdf(bytes)
  try {
    const page = pdf.loadPage(index)
    const pixmap = page.toPixmap(mupdf.Matrix.scale(scale, scale), mupdf.ColorSpace.DeviceRGB, false)
    try {
      return { png: pixmap.asPNG(), width: pixmap.getWidth(), height: pixmap.getHeight() }
    } finally {
      pixmap.destroy()
      page.destroy()
    }
  } finally {
    pdf.destroy()
  }
}

const replaceWithImage = (pdf: mupdf.PDFDocument, index: number, png: Uint8Array) => {
  const page = pdf.loadPage(index)
  const [x0, y0, x1, y1] = page.getBounds()
  page.destroy()
  const width = x1 - x0
  const height = y1 - y0
  const image = pdf.addImage(new mupdf.Image(png))
  const resources = pdf.newDictionary()
  const xobjects = pdf.newDictionary()
  xobjects.put("Im0", image)
  resources.put("XObject", xobjects)
  const contents = `q ${width} 0 0 ${height} 0 0 cm /Im0 Do Q`
  const replacement = pdf.addPage([0, 0, width, height], 0, resources, contents)
  pdf.insertPage(index, replacement)
  pdf.deletePage(index + 1)
}

export const redact = (bytes: Uint8Array, edits: ReadonlyArray<PageEdit>): Uint8Array => {
  const pdf = openPdf(bytes)
  try {
    for (const [index, edit] of edits.entries()) {
      if (edit.png !== undefined) {
        replaceWithImage(pdf, index, edit.png)
        continue
      }
      if (edit.rects.length === 0) continue
      const page = pdf.loadPage(index) as mupdf.PDFPage
      for (const rect of edit.rects) page.createAnnotation("Redact").setRect(rect)
      // Black boxes where the text was; images under the boxes lose those pixels too.
      page.applyRedactions(true, mupdf.PDFPage.REDACT_IMAGE_PIXELS)
      page.destroy()
    }
    // Garbage collection drops the objects the redactions orphaned (the removed text included).
    const saved = pdf.saveToBuffer("garbage=compact,compress")
    // A copy: the buffer's own bytes are a view into the WebAssembly heap.
    const output = saved.asUint8Array().slice()
    saved.destroy()
    return output
  } finally {
    pdf.destroy()
  }
}

/** An image sharp cannot read (BMP) as packed rows of RGB (or RGBA) samples. */
export const decodeImage = (bytes: Uint8Array) => {
  const image = new mupdf.Image(bytes)
  let pixmap = image.toPixmap()
  try {
    if (pixmap.getColorSpace()?.getName() !== "DeviceRGB") {
      const converted = pixmap.convertToColorSpace(mupdf.ColorSpace.DeviceRGB, true)
      pixmap.destroy()
      pixmap = converted
    }
    // Counts the alpha channel too.
    const channels = pixmap.getNumberOfComponents()
    const width = pixmap.getWidth()
    const height = pixmap.getHeight()
    const stride = pixmap.getStride()
    const samples = pixmap.getPixels()
    const row = width * channels
    const pixels = new Uint8Array(row * height)
    for (let y = 0; y < height; y++) pixels.set(samples.subarray(y * stride, y * stride + row), y * row)
    return { width, height, channels, pixels }
  } finally {
    pixmap.destroy()
    image.destroy()
  }
}
