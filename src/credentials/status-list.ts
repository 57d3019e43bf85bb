/**
 * StatusList2021 bitstrings: 131,072 bits (16 KB) per list, bit i = byte i/8, most significant
 * bit first (the W3C draft's left-to-right order); `encodedList` is GZIP then base64url.
 */
import { gzipSync } from "node:zlib"

export const STATUS_LIST_BITS = 131_072
export const STATUS_LIST_BYTES = STATUS_LIST_BITS / 8

export const emptyStatusList = (): Buffer => Buffer.alloc(STATUS_LIST_BYTES)

export const isBitSet = (bits: Uint8Array, index: number): boolean => ((bits[index >> 3] ?? 0) & (0x80 >> (index & 7))) !== 0

export const encodeStatusList = (bits: Uint8Array): string => gzipSync(bits).toString("base64url")
