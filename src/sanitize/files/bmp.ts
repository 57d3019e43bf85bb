/** Writes 24-bit uncompressed BMP (sharp reads and writes no BMP; mupdf decodes it, this encodes it back). */
export const encodeBmp = (width: number, height: number, rgb: Uint8Array, channels: number): Uint8Array => {
  const rowBytes = Math.ceil((width * 3) / 4) * 4
  const dataSize = rowBytes * height
  const out = Buffer.alloc(54 + dataSize)
  out.write("BM", 0, "ascii")
  out.writeUInt32LE(54 + dataSize, 2)
  out.writeUInt32LE(54, 10)
  out.writeUInt32LE(40, 14)
  out.writeInt32LE(width, 18)
  out.writeInt32LE(height, 22)
  out.writeUInt16LE(1, 26)
  out.writeUInt16LE(24, 28)
  out.writeUInt32LE(dataSize, 34)
  for (let y = 0; y < height; y++) {
    // Bottom-up rows, BGR order.
    const row = 54 + (height - 1 - y) * rowBytes
    for (let x = 0; x < width; x++) {
      const from = (y * width + x) * channels
      out[row + x * 3] = rgb[from + 2]!
      out[row + x * 3 + 1] = rgb[from + 1]!
      out[row + x * 3 + 2] = rgb[from]!
    }
  }
  return out
}
