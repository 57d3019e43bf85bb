// Bytes to asn1js values for pkijs. pkijs' own fromBER ignores anything after the
// first value; tokens and requests with trailing bytes are refused here instead.
import * as asn1js from "asn1js"

/** The single BER/DER value that must fill `bytes` exactly. */
export const decodeSingle = (bytes: Uint8Array): asn1js.AsnType => {
  // Not parsing inside OCTET and BIT STRINGs (signatures, keys) saves asn1js much work.
  const decoded = asn1js.fromBER(bytes, { parseEmbedded: false })
  if (decoded.offset === -1) throw new Error(decoded.result.error || "malformed DER")
  if (decoded.offset !== bytes.length) throw new Error("trailing bytes after the DER value")
  return decoded.result
}

/** The exact bytes a decoded value was read from (signatures and hashes cover those). */
export const encodingOf = (value: asn1js.AsnType): Uint8Array => new Uint8Array(value.valueBeforeDecodeView)

/** The values inside a decoded SEQUENCE, SET or explicit tag; none for anything else. */
export const itemsOf = (value: asn1js.AsnType | undefined): asn1js.AsnType[] =>
  value instanceof asn1js.Constructed ? value.valueBlock.value : []

/** Context-specific tag [n] (explicit or implicit). */
export const isContextTag = (value: asn1js.AsnType | undefined, tagNumber: number): boolean =>
  value?.idBlock.tagClass === 3 && value.idBlock.tagNumber === tagNumber
