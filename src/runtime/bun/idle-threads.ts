/**
 * @module Threads beside the request thread that should run only while it does not: the allocator's
 * scavenger (mimalloc's `mi-scavenger`, which hands freed memory back to the system). On Linux it
 * takes the SCHED_IDLE policy (sched(7)): such a thread gets the core only when nothing else wants
 * it, and gives it up the moment the request thread wakes. Nice 19, the most `os.setPriority`
 * offers, was not enough: on the server's one core the scavenger still finished its slice first, and
 * the request thread waited for the core up to several milliseconds at a time (bench/findings.md,
 * 2026-11-28). Where libc's `sched_setscheduler` cannot be called, nice 19. The checkpoint worker
 * keeps nice 19: it must still run under a load that never pauses (checkpointer.ts).
 */
import { dlopen, FFIType, ptr } from 'bun:ffi'
import { readdirSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

/** sched.h: the policy of threads that run only when the core is otherwise idle. */
const SCHED_IDLE = 5

/** What a thread was lowered to: the idle policy, nice 19, or nothing (not Linux, or not permitted). */
export type Lowered = 'idle' | 'nice 19' | null

function idlePolicy(tid: number): boolean {
  try {
    const libc = dlopen('libc.so.6', {
      sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    })
    try {
      // The policy's one parameter, its static priority, is 0 for SCHED_IDLE.
      return libc.symbols.sched_setscheduler(tid, SCHED_IDLE, ptr(new Int32Array(1))) === 0
    } finally {
      libc.close()
    }
  } catch {
    return false
  }
}

/**
 * Lowers thread `tid` (0: the calling thread). Linux only: there a thread has its own policy and nice
 * value; elsewhere either call would lower the whole server.
 */
export function runOnlyWhenIdle(tid = 0): Lowered {
  if (process.platform !== 'linux') return null
  if (idlePolicy(tid)) return 'idle'
  try {
    setPriority(tid, 19)
    return 'nice 19'
  } catch {
    return null
  }
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
