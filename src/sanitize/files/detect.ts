/** The file type by its leading bytes only (spec "POST /sanitize/file"), never the declared type or name. */
export const FILE_TYPES = ["jpeg", "png", "gif", "bmp", "tiff", "pdf", "dicom"] as const
export type FileType = (typeof FILE_TYPES)[number]

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((byte, i) => bytes[at + i] === byte)

const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0))

export const detectFileType = (bytes: Uint8Array): FileType | undefined => {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg"
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "png"
  if (startsWith(bytes, ascii("%PDF"))) return "pdf"
  if (startsWith(bytes, ascii("DICM"), 128)) return "dicom"
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "gif"
  if (startsWith(bytes, ascii("BM"))) return "bmp"
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return "tiff"
  return undefined
}

export const contentTypeOf: Record<FileType, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  bmp: "image/bmp",
  tiff: "image/tiff",
  pdf: "application/pdf",
  dicom: "application/dicom"
}

export const extensionOf: Record<FileType, string> = { jpeg: "jpg", png: "png", gif: "gif", bmp: "bmp", tiff: "tiff", pdf: "pdf", dicom: "dcm" }

/** `sanitized_<name>.<ext>`: the original name without its extension, reduced to safe characters for the header. */
export const downloadName = (originalName: string, type: FileType): string => {
  const base = originalName.replace(/^.*[\\/]/, "").replace(/\.[^.]*$/, "")
  const safe = base.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._]+/, "").slice(0, 120)
  return `sanitized_${safe === "" ? "file" : safe}.${extensionOf[type]}`
}
