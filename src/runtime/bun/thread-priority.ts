/**
 * @module The checkpoint worker, kept from holding the request thread's core. With the server on one
 * core, the request thread waited for the core up to several milliseconds at a time while the worker
 * finished its slice: nice 19, the most `os.setPriority` offers, lowers a thread's share of the core,
 * not how long it keeps it once it has it (bench/findings.md, 2026-11-28). Linux only: there a thread
 * has its own nice value and slice; elsewhere either would lower the whole server. The call goes to
 * libc through `bun:ffi`; where that fails, nice 19 alone.
 */
import { dlopen, FFIType, ptr } from 'bun:ffi'
import { setPriority } from 'node:os'

/** The `sched_setattr` system call's number, by architecture (it has no libc wrapper before glibc 2.41). */
const SCHED_SETATTR: Partial<Record<string, number>> = { x64: 314, arm64: 274 }
/** The slice the thread asks for (Linux 6.12 and later honour it; the least they take): it keeps the core at most this long once the request thread wakes. */
const SHORT_SLICE_NS = 100_000n

/** What the thread was lowered to; null: nothing (not Linux, or not permitted). */
export type Lowered = 'nice 19, short slices' | 'nice 19' | null

/** `sched_setattr(tid, attr, 0)` through libc's `syscall`; false where libc cannot be loaded or the call fails. */
function setAttributes(call: number, tid: number, attr: DataView): boolean {
  try {
    const libc = dlopen('libc.so.6', { syscall: { args: [FFIType.i64, FFIType.i64, FFIType.ptr, FFIType.i64], returns: FFIType.i64 } })
    try {
      return libc.symbols.syscall(call, tid, ptr(attr), 0) === 0n
    } finally {
      libc.close()
    }
  } catch {
    return false
  }
}

function niceOnly(tid: number): Lowered {
  try {
    setPriority(tid, 19)
    return 'nice 19'
  } catch {
    return null
  }
}

/**
 * Thread `tid` (0: the calling one) at nice 19 with short slices (`sched_setattr`): it keeps its small
 * share of a busy core, for work that must go on under a load that never pauses (the checkpoint
 * worker), but gives the core up within a slice of the request thread waking.
 */
export function yieldQuickly(tid = 0): Lowered {
  if (process.platform !== 'linux') return null
  const call = SCHED_SETATTR[process.arch]
  const attr = new DataView(new ArrayBuffer(56))
  attr.setUint32(0, attr.byteLength, true) // size; policy (SCHED_OTHER) and flags stay 0
  attr.setInt32(16, 19, true) // nice
  attr.setBigUint64(24, SHORT_SLICE_NS, true) // runtime: the slice, for SCHED_OTHER
  if (call !== undefined && setAttributes(call, tid, attr)) return 'nice 19, short slices'
  return niceOnly(tid)
}
