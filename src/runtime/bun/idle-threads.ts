/**
 * @module Threads beside the request thread, kept from holding its core. With the server on one
 * core, its thread waited for the core up to several milliseconds at a time while another thread
 * finished its slice; nice 19, the most `os.setPriority` offers, lowers a thread's share, not how
 * long it keeps the core once it has it (bench/findings.md, 2026-11-28). Linux only: there a thread
 * has its own policy and nice value; elsewhere either would lower the whole server. Both calls go to
 * libc through `bun:ffi`; where that fails, nice 19 alone.
 */
import { dlopen, FFIType, ptr } from 'bun:ffi'
import { readdirSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

/** sched.h: the policy of threads that run only when the core is otherwise idle. */
const SCHED_IDLE = 5
/** The `sched_setattr` system call's number, by architecture (it has no libc wrapper before glibc 2.41). */
const SCHED_SETATTR: Partial<Record<string, number>> = { x64: 314, arm64: 274 }
/** The slice a yielding thread asks for (Linux 6.12 and later honour it; the least they take): it keeps the core at most this long once the request thread wakes. */
const SHORT_SLICE_NS = 100_000n

/** What a thread was lowered to; null: nothing (not Linux, or not permitted). */
export type Lowered = 'idle' | 'nice 19, short slices' | 'nice 19' | null

function libc() {
  return dlopen('libc.so.6', {
    sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    syscall: { args: [FFIType.i64, FFIType.i64, FFIType.ptr, FFIType.i64], returns: FFIType.i64 },
  })
}

/** `call` with libc's functions; false where libc cannot be loaded or the call fails. */
function withLibc(call: (symbols: ReturnType<typeof libc>['symbols']) => boolean): boolean {
  try {
    const library = libc()
    try {
      return call(library.symbols)
    } finally {
      library.close()
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
 * Thread `tid` (0: the calling one) runs only when nothing else wants the core (SCHED_IDLE, sched(7)),
 * and gives it up the moment another thread wakes: for work that may wait while the server is busy,
 * as the allocator's scavenger handing freed memory back.
 */
export function runOnlyWhenIdle(tid = 0): Lowered {
  if (process.platform !== 'linux') return null
  // The policy's one parameter, its static priority, is 0 for SCHED_IDLE.
  if (withLibc((c) => c.sched_setscheduler(tid, SCHED_IDLE, ptr(new Int32Array(1))) === 0)) return 'idle'
  return niceOnly(tid)
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
  if (call !== undefined && withLibc((c) => c.syscall(call, tid, ptr(attr), 0) === 0n)) return 'nice 19, short slices'
  return niceOnly(tid)
}

/** This process's threads called `name` (Linux's `/proc/self/task/<tid>/comm`); none elsewhere. */
export function threadsNamed(name: string): number[] {
  try {
    return readdirSync('/proc/self/task')
      .filter((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === name)
      .map(Number)
  } catch {
    return []
  }
}
