/**
 * What one uploaded file may make the decoders do (docs/decisions.md "File decoding budgets").
 * Each number is compared with what the file DECLARES (header dimensions, page counts, element
 * lengths) before anything is decoded, so a small file cannot ask for a large allocation. Plain
 * constants with no imports: the worker threads load this file as it is.
 */

/** Pixels of one image, rendered page or DICOM frame: 4096 × 3072 (12.6 MP, an A4 scan at 350 dpi). */
export const MAX_IMAGE_PIXELS = 4096 * 3072
/** Pixels one file may have decoded in all: its images, rendered pages or frames together. */
export const MAX_FILE_PIXELS = 16 * MAX_IMAGE_PIXELS
/** DICOM frames read for burned-in text per file; beyond it a warning finding says the rest were not looked at. */
export const MAX_OCR_FRAMES = 16
/** Pages of a PDF, with or without a text layer. */
export const MAX_PAGES = 2_000
/** Pages without a text layer (each is rendered and OCR'd). */
export const MAX_SCANNED_PAGES = 100
/** Characters of text on one PDF page (the text engine runs on the request loop, one page at a time). */
export const MAX_PAGE_CHARACTERS = 100_000
/**
 * Characters of text of one file: its PDF pages, or the character values of its DICOM elements.
 * The text engine takes ~1.4 µs a character on the request loop (between pages), and a PDF's
 * character boxes 16 bytes each: about 1.4 s and 16 MB at most.
 */
export const MAX_TEXT_CHARACTERS = 1_000_000
/** Elements of one DICOM file, sequences' items included. */
export const MAX_DICOM_ELEMENTS = 100_000
/** Nesting of DICOM sequences, and of PDF form XObjects and patterns. */
export const MAX_NESTING_DEPTH = 32
/** A deflated DICOM dataset once inflated. */
export const MAX_INFLATED_BYTES = 128 * 1024 * 1024

/** Estimated bytes of decoder memory in flight in the whole process (the decode semaphore). */
export const DECODE_MEMORY_BYTES = 256 * 1024 * 1024
/** Decode jobs waiting for that memory; one more is refused as busy (503). */
export const DECODE_QUEUE = 32
/** Worker threads for PDF and image decoding; one for DICOM. */
export const DECODER_WORKERS = 2
/** V8 heap of each decoder worker; a worker that reaches it dies and its file is refused. */
export const DECODER_HEAP_MB = 128
/** Computing time of one decoder or DICOM job (waiting for OCR excluded): far above any honest file, a bound on a decoder caught in a loop. */
export const DECODER_JOB_MS = 120_000
/** WebAssembly memory (mupdf) one decoder worker may grow to; an allocation past it fails. */
export const WASM_MEMORY_BYTES = 256 * 1024 * 1024
/** A worker whose WebAssembly memory grew beyond this is replaced after its job (memory.grow never shrinks). */
export const WASM_RECYCLE_BYTES = 96 * 1024 * 1024
/** A worker whose V8 heap grew beyond this is replaced after its job (a large PDF's text, a DICOM's tags). */
export const WORKER_RECYCLE_HEAP_BYTES = 64 * 1024 * 1024

/**
 * Bytes a decoded raster holds, 8 bits per sample (16 when declared), at least 3 samples a
 * pixel (palettes and grey are expanded to RGB by some decoders).
 */
export const rasterBytes = (pixels: number, channels: number, bytesPerSample = 1) => pixels * Math.max(3, channels) * bytesPerSample

/** Copies of the raster a decode job holds at once: decoded, composited or converted, encoded. */
export const RASTER_COPIES = 3
