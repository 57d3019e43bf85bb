/**
 * A ceiling on the WebAssembly memory of this thread (mupdf's heap). V8's resource limits do not
 * cover it, and an Emscripten heap grows through `Memory.prototype.grow`: refusing a growth past
 * the ceiling makes that allocation fail inside mupdf, which throws, instead of the heap taking
 * gigabytes. Records whether a growth was refused (the job is then refused as too complex) and
 * how large the heap grew (it never shrinks: the worker is replaced). Plain erasable TypeScript.
 */

let refused = false
let largest = 0

interface GrowableMemory {
  readonly buffer: ArrayBuffer
  grow(delta: number): number
}
// The compiler's libraries here declare no WebAssembly globals; Node has them.
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: { prototype: GrowableMemory } } }).WebAssembly

export const capWasmMemory = (maximumBytes: number): void => {
  const grow = Memory.prototype.grow
  Memory.prototype.grow = function (this: GrowableMemory, delta: number): number {
    const after = this.buffer.byteLength + delta * 65_536
    if (after > maximumBytes) {
      refused = true
      throw new RangeError("WebAssembly memory budget reached")
    }
    largest = Math.max(largest, after)
    return grow.call(this, delta)
  }
}

/** Whether a growth was refused since the last call (and forgets it). */
export const takeRefusal = (): boolean => {
  const was = refused
  refused = false
  return was
}

/** The largest WebAssembly memory this thread has grown to. */
export const largestMemory = (): number => largest
