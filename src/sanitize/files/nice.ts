/**
 * Lowers the scheduling priority of the calling thread (Linux: a thread's id is a valid target
 * of setpriority). Worker threads doing OCR, PDF or DICOM work call it first, so on a busy machine
 * the request loop gets the CPU before them. Elsewhere it does nothing.
 */
import { readlinkSync } from "node:fs"
import { setPriority } from "node:os"

export const lowerThreadPriority = (niceness = 10): void => {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, niceness)
  } catch {
    // Not Linux, or not permitted: run at normal priority.
  }
}
