/**
 * Lets a uWebSockets.js binary built against glibc 2.38 load on an older glibc, by editing a copy
 * of the ELF file (never a compiler, never LD_PRELOAD).
 *
 * The shipped binaries need glibc 2.38 only for three C23 entry points: `__isoc23_strtol`,
 * `__isoc23_strtoul` and `__isoc23_sscanf`. They differ from the classic `strtol`, `strtoul` and
 * `sscanf` only in accepting a "0b" binary prefix (strtol/strtoul with base 0 or 2, sscanf's `%i`).
 * The patch points each of those dynamic symbols at its classic name (a suffix of the C23 name, so
 * already in `.dynstr`) at version GLIBC_2.2.5, and marks the binary's GLIBC_2.38 version need weak
 * so the loader does not insist on it. Three 4-byte names, three 2-byte version indices and one
 * 2-byte flags field change; nothing moves.
 *
 * Everything is read from the section headers and bounds-checked; anything unexpected is refused
 * with an `ElfPatchError` rather than written.
 */

export class ElfPatchError extends Error {
  override readonly name = "ElfPatchError"
}

/** The C23 symbols glibc 2.38 introduced that uWS references, each ending with its classic name. */
export const C23_SYMBOLS = ["__isoc23_strtol", "__isoc23_strtoul", "__isoc23_sscanf"] as const
const C23_PREFIX = "__isoc23_"
const NEW_VERSION = "GLIBC_2.38"
const CLASSIC_VERSION = "GLIBC_2.2.5"
const LIBC = "libc.so.6"

const SHT_STRTAB = 3
const SHT_DYNSYM = 11
const SHT_NOBITS = 8
const SHT_GNU_HASH = 0x6ffffff6
const SHT_GNU_VERNEED = 0x6ffffffe
const SHT_GNU_VERSYM = 0x6fffffff
const SHN_UNDEF = 0
const VER_FLG_WEAK = 0x2
const VERSYM_HIDDEN = 0x8000
const SYM_SIZE = 24

interface Section {
  readonly index: number
  readonly name: string
  readonly type: number
  readonly offset: number
  readonly size: number
  readonly link: number
  readonly info: number
  readonly entsize: number
}

/** A Vernaux entry of `.gnu.version_r`, with where its flags live in the file. */
export interface VersionNeed {
  readonly file: string
  readonly version: string
  /** vna_other: the index `.gnu.version` entries use for this version. */
  readonly index: number
  readonly weak: boolean
  /** File offset of vna_flags. */
  readonly flagsOffset: number
}

/** An undefined dynamic symbol and the version it asks for, with where its fields live. */
export interface ImportedSymbol {
  readonly symbol: number
  readonly name: string
  readonly version: string | undefined
  /** File offset of st_name in `.dynsym`. */
  readonly nameOffset: number
  /** File offset of its 2-byte entry in `.gnu.version`. */
  readonly versymOffset: number
}

export interface ElfVersions {
  readonly needs: ReadonlyArray<VersionNeed>
  readonly imports: ReadonlyArray<ImportedSymbol>
}

const fail = (message: string): never => {
  throw new ElfPatchError(`not patching the uWS binary: ${message}`)
}

const latin1 = new TextDecoder("latin1")

/** A parsed view of the dynamic-linking sections; every offset it hands out is in bounds. */
class Elf {
  readonly view: DataView
  readonly sections: ReadonlyArray<Section>

  constructor(readonly bytes: Uint8Array) {
    if (bytes.length < 64) fail(`${bytes.length} bytes is shorter than an ELF64 header`)
    if (bytes[0] !== 0x7f || bytes[1] !== 0x45 || bytes[2] !== 0x4c || bytes[3] !== 0x46) fail("not an ELF file (bad magic)")
    if (bytes[4] !== 2) fail(`not a 64-bit ELF (EI_CLASS ${bytes[4]})`)
    if (bytes[5] !== 1) fail(`not a little-endian ELF (EI_DATA ${bytes[5]})`)
    if (bytes[6] !== 1) fail(`unknown ELF version ${bytes[6]}`)
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const shoff = this.u64(0x28)
    const shentsize = this.u16(0x3a)
    const shnum = this.u16(0x3c)
    const shstrndx = this.u16(0x3e)
    if (shoff === 0 || shnum === 0) fail("no section headers (or extended section numbering, which is not supported)")
    if (shentsize < 64) fail(`section header entries of ${shentsize} bytes (ELF64 needs 64)`)
    if (shstrndx === 0 || shstrndx >= shnum) fail(`section name table index ${shstrndx} out of range (${shnum} sections)`)
    this.range(shoff, shnum * shentsize, "section header table")
    const raw = Array.from({ length: shnum }, (_, index) => {
      const at = shoff + index * shentsize
      const type = this.u32(at + 4)
      const offset = this.u64(at + 24)
      const size = this.u64(at + 32)
      if (type !== SHT_NOBITS && index !== 0) this.range(offset, size, `section ${index}`)
      return { index, nameIndex: this.u32(at), type, offset, size, link: this.u32(at + 40), info: this.u32(at + 44), entsize: this.u64(at + 56) }
    })
    const shstrtab = raw[shstrndx]!
    if (shstrtab.type !== SHT_STRTAB) fail("the section name table is not a string table")
    this.sections = raw.map(({ nameIndex, ...section }) => ({ ...section, name: this.string(shstrtab, nameIndex, "section name") }))
  }

  u16(at: number): number {
    this.range(at, 2, "field")
    return this.view.getUint16(at, true)
  }

  u32(at: number): number {
    this.range(at, 4, "field")
    return this.view.getUint32(at, true)
  }

  u64(at: number): number {
    this.range(at, 8, "field")
    const value = this.view.getBigUint64(at, true)
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) fail(`offset ${value} at ${at} is out of range`)
    return Number(value)
  }

  range(offset: number, length: number, what: string): void {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > this.bytes.length) {
      fail(`${what} (${length} bytes at ${offset}) runs past the end of the ${this.bytes.length}-byte file (truncated?)`)
    }
  }

  /** The NUL-terminated string at `index` of string table `table`. */
  string(table: { readonly offset: number; readonly size: number }, index: number, what: string): string {
    if (index >= table.size) fail(`${what} offset ${index} is outside its string table (${table.size} bytes)`)
    const start = table.offset + index
    const end = this.bytes.indexOf(0, start)
    if (end < 0 || end >= table.offset + table.size) fail(`${what} at ${index} is not NUL-terminated inside its string table`)
    return latin1.decode(this.bytes.subarray(start, end))
  }

  section(name: string, type: number): Section {
    const found = this.sections.filter((section) => section.name === name)
    if (found.length !== 1) return fail(found.length === 0 ? `no ${name} section` : `${found.length} sections named ${name}`)
    if (found[0]!.type !== type) fail(`${name} has type 0x${found[0]!.type.toString(16)}, expected 0x${type.toString(16)}`)
    return found[0]!
  }

  optionalSection(name: string): Section | undefined {
    return this.sections.find((section) => section.name === name)
  }
}

interface Parsed {
  readonly elf: Elf
  readonly dynsym: Section
  readonly dynstr: Section
  readonly needs: ReadonlyArray<VersionNeed>
  readonly imports: ReadonlyArray<ImportedSymbol>
}

const parse = (bytes: Uint8Array): Parsed => {
  const elf = new Elf(bytes)
  const dynsym = elf.section(".dynsym", SHT_DYNSYM)
  const dynstr = elf.section(".dynstr", SHT_STRTAB)
  const versym = elf.section(".gnu.version", SHT_GNU_VERSYM)
  const verneed = elf.section(".gnu.version_r", SHT_GNU_VERNEED)
  if (dynsym.entsize !== SYM_SIZE || dynsym.size % SYM_SIZE !== 0) fail(`.dynsym entries are not ${SYM_SIZE} bytes`)
  if (dynsym.link !== dynstr.index) fail(".dynsym does not link to .dynstr")
  if (verneed.link !== dynstr.index) fail(".gnu.version_r does not link to .dynstr")
  if (versym.link !== dynsym.index) fail(".gnu.version does not link to .dynsym")
  const symbols = dynsym.size / SYM_SIZE
  if (versym.size !== symbols * 2) fail(`.gnu.version has ${versym.size / 2} entries for ${symbols} symbols`)

  // Verneed entries (sh_info of them), each with vn_cnt Vernaux entries; offsets are relative.
  const needs: VersionNeed[] = []
  let need = verneed.offset
  for (let n = 0; n < verneed.info; n++) {
    if (need + 16 > verneed.offset + verneed.size) fail(".gnu.version_r entry runs past its section")
    if (elf.u16(need) !== 1) fail(`.gnu.version_r entry ${n} has unknown version ${elf.u16(need)}`)
    const count = elf.u16(need + 2)
    const file = elf.string(dynstr, elf.u32(need + 4), "vn_file")
    let aux = need + elf.u32(need + 8)
    for (let a = 0; a < count; a++) {
      if (aux < verneed.offset || aux + 16 > verneed.offset + verneed.size) fail(`.gnu.version_r auxiliary entry of ${file} runs past its section`)
      const flags = elf.u16(aux + 4)
      needs.push({
        file,
        version: elf.string(dynstr, elf.u32(aux + 8), "vna_name"),
        index: elf.u16(aux + 6),
        weak: (flags & VER_FLG_WEAK) !== 0,
        flagsOffset: aux + 4
      })
      const next = elf.u32(aux + 12)
      if (a < count - 1 && next === 0) fail(`${file} declares ${count} version needs but lists ${a + 1}`)
      aux += next
    }
    const next = elf.u32(need + 12)
    if (n < verneed.info - 1 && next === 0) fail(`.gnu.version_r declares ${verneed.info} entries but lists ${n + 1}`)
    need += next
  }
  const versionByIndex = new Map(needs.map((entry) => [entry.index, entry.version]))

  const imports: ImportedSymbol[] = []
  for (let symbol = 1; symbol < symbols; symbol++) {
    const at = dynsym.offset + symbol * SYM_SIZE
    if (elf.u16(at + 6) !== SHN_UNDEF) continue
    const versymOffset = versym.offset + symbol * 2
    imports.push({
      symbol,
      name: elf.string(dynstr, elf.u32(at), "symbol name"),
      version: versionByIndex.get(elf.u16(versymOffset) & ~VERSYM_HIDDEN),
      nameOffset: at,
      versymOffset
    })
  }
  return { elf, dynsym, dynstr, needs, imports }
}

/** The binary's version needs and imported symbols, as the patch sees them. */
export const elfVersions = (bytes: Uint8Array): ElfVersions => {
  const { needs, imports } = parse(bytes)
  return { needs, imports }
}

/** Whether the dynamic loader will insist on glibc 2.38 for this binary (a non-weak GLIBC_2.38 need). */
export const needsGlibc238 = (bytes: Uint8Array): boolean =>
  parse(bytes).needs.some((need) => need.version === NEW_VERSION && !need.weak)

/** One byte range the patch rewrote, for reports and tests. */
export interface PatchEdit {
  readonly offset: number
  readonly length: number
  readonly what: string
}

/**
 * A copy of `bytes` that loads on glibc < 2.38: the three C23 imports renamed to their classic
 * names at GLIBC_2.2.5, and the GLIBC_2.38 need weak. Refuses (ElfPatchError) anything it does not
 * understand, including a binary that asks GLIBC_2.38 for any other symbol.
 */
export const patchForOldGlibc = (bytes: Uint8Array): { readonly bytes: Uint8Array; readonly edits: ReadonlyArray<PatchEdit> } => {
  const { elf, dynstr, needs, imports } = parse(bytes)
  const newNeeds = needs.filter((need) => need.version === NEW_VERSION)
  if (newNeeds.length === 0) fail(`the binary does not reference ${NEW_VERSION}`)
  if (newNeeds.some((need) => need.file !== LIBC)) fail(`${NEW_VERSION} is needed from ${newNeeds.map((need) => need.file).join(", ")}, expected only ${LIBC}`)
  const newNeed = newNeeds[0]!
  const classic = needs.find((need) => need.file === LIBC && need.version === CLASSIC_VERSION)
  if (!classic) return fail(`the binary has no ${CLASSIC_VERSION} version need for ${LIBC} to move the C23 symbols to`)

  const onNewVersion = imports.filter((symbol) => symbol.version === NEW_VERSION)
  const unknown = onNewVersion.filter((symbol) => !(C23_SYMBOLS as ReadonlyArray<string>).includes(symbol.name))
  if (unknown.length > 0) fail(`${NEW_VERSION} is also needed for ${unknown.map((symbol) => symbol.name).join(", ")}, which this patch does not know`)

  // .gnu.hash only indexes defined symbols (from symoffset on); an import's name is not hashed there.
  const gnuHash = elf.optionalSection(".gnu.hash")
  const symoffset = gnuHash && gnuHash.type === SHT_GNU_HASH ? elf.u32(gnuHash.offset + 4) : Number.POSITIVE_INFINITY

  const out = new Uint8Array(bytes)
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
  const edits: PatchEdit[] = []
  for (const symbol of onNewVersion) {
    if (symbol.symbol >= symoffset) fail(`${symbol.name} is inside the .gnu.hash table`)
    const classicName = symbol.name.slice(C23_PREFIX.length)
    const nameIndex = view.getUint32(symbol.nameOffset, true) + C23_PREFIX.length
    if (elf.string(dynstr, nameIndex, "classic name") !== classicName) fail(`${symbol.name} does not end with ${classicName} in .dynstr`)
    view.setUint32(symbol.nameOffset, nameIndex, true)
    view.setUint16(symbol.versymOffset, classic.index, true)
    edits.push(
      { offset: symbol.nameOffset, length: 4, what: `.dynsym[${symbol.symbol}].st_name ${symbol.name} -> ${classicName}` },
      { offset: symbol.versymOffset, length: 2, what: `.gnu.version[${symbol.symbol}] ${NEW_VERSION} -> ${CLASSIC_VERSION}` }
    )
  }
  view.setUint16(newNeed.flagsOffset, view.getUint16(newNeed.flagsOffset, true) | VER_FLG_WEAK, true)
  edits.push({ offset: newNeed.flagsOffset, length: 2, what: `.gnu.version_r ${LIBC} ${NEW_VERSION} vna_flags |= VER_FLG_WEAK` })
  return { bytes: out, edits }
}

/** The patched copy only (see `patchForOldGlibc`). */
export const patchedForOldGlibc = (bytes: Uint8Array): Uint8Array => patchForOldGlibc(bytes).bytes
