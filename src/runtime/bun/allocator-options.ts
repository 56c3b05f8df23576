/**
 * @module The options of Bun's allocator (mimalloc) the server runs with. On Linux, a server started
 * without them executes itself again, in place (the same process id, arguments and environment, plus
 * these), before the entry (server.ts) loads the sandbox.
 *
 * Why: Bun's allocator hands the free blocks inside pages still in use back to the kernel from its
 * own thread (`mi-scavenger`), in bursts of 2–5 ms spent in the kernel, which keeps the core however
 * the thread's priority or slice is set. With the server on one core, the request thread waited for
 * the core through them: 230–300 ms in each 10-second row at half the server's rate, against 23–164
 * ms with them off (bench/findings.md, 2026-11-28). Each process pays for it in memory: 15–45 MB more
 * at its peak under wrk. mimalloc reads its options only from the environment, when the process
 * starts, so the server cannot set them for itself. An option the operator set is left as it is.
 */
import { dlopen, FFIType, ptr } from 'bun:ffi'
import { readFileSync } from 'node:fs'

/** Free blocks inside pages still in use stay with the process; empty pages still go back. */
export const ALLOCATOR_OPTIONS: Readonly<Record<string, string>> = { MIMALLOC_PURGE_HOLES: '0' }

/** NUL-separated strings as a C array of pointers into `bytes`, with its closing NULL. */
function pointers(bytes: Buffer): BigUint64Array {
  const starts = [0]
  for (let at = bytes.indexOf(0); at !== -1 && at + 1 < bytes.length; at = bytes.indexOf(0, at + 1)) starts.push(at + 1)
  const array = new BigUint64Array(starts.length + 1)
  starts.forEach((start, i) => (array[i] = BigInt(ptr(bytes, start))))
  return array
}

/** execve(2) through libc; returns only where it failed (libc not found, execution refused). */
function executeAgain(argv: Buffer, environ: Buffer): void {
  try {
    const libc = dlopen('libc.so.6', { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } })
    const exe = Buffer.from('/proc/self/exe\0')
    const [args, env] = [pointers(argv), pointers(environ)]
    libc.symbols.execve(ptr(exe), ptr(args), ptr(env))
    libc.close()
  } catch {
    // The server runs with the allocator as Bun starts it.
  }
}

/** The options missing from `env`, as `NAME=value` strings. */
export function missingOptions(env: Record<string, string | undefined>): string[] {
  return Object.entries(ALLOCATOR_OPTIONS)
    .filter(([name]) => env[name] === undefined)
    .map(([name, value]) => `${name}=${value}`)
}

/**
 * On Linux, where the options are missing, executes the process again with them: the arguments and
 * environment exactly as the kernel started it with (`/proc/self/cmdline`, `/proc/self/environ`).
 */
export function startWithAllocatorOptions(env: Record<string, string | undefined> = process.env): void {
  const missing = missingOptions(env)
  if (process.platform !== 'linux' || missing.length === 0) return
  try {
    const argv = readFileSync('/proc/self/cmdline')
    const environ = Buffer.concat([readFileSync('/proc/self/environ'), Buffer.from(`${missing.join('\0')}\0`)])
    executeAgain(argv, environ)
  } catch {
    // /proc unreadable: the server runs with the allocator as Bun starts it.
  }
}
