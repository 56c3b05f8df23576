/**
 * @module The options of Bun's allocator (mimalloc) a hosted server runs with. On Linux, a server
 * started without them executes itself again, in place (the same process id and arguments, the same
 * environment plus these), before the entry (server.ts) loads the sandbox.
 *
 * Why: Bun's allocator hands the free blocks inside pages still in use back to the kernel from its
 * own thread (`mi-scavenger`), in bursts of a few milliseconds spent in system calls. With the server
 * on one core, the request thread waited for the core through them; nice 19 or shorter slices for
 * that thread did not help, and the idle policy slowed the expiry sweep. With hole purging off, the
 * waits fell two- to sixfold, for some more memory (bench/findings.md, 2026-11-28, morning).
 * mimalloc reads its options only from the environment the process started with, so the running
 * process cannot set them for itself.
 */
import { readFileSync } from 'node:fs'
import { logLine } from '../../log'

/** Free blocks inside pages still in use stay with the process; empty pages still go back. */
export const ALLOCATOR_OPTIONS: Readonly<Record<string, string>> = { MIMALLOC_PURGE_HOLES: '0' }

/**
 * Whether this start should have them: on Linux (where /proc gives the process's own arguments),
 * and not in the local profile (`--local` or `SANDBOX_PROFILE=local`, `env` as the command line
 * amends it): on a partner's own machine or CI, start-up time and memory matter more than the tail
 * under load.
 */
export function wantsAllocatorOptions(env: Record<string, string | undefined>, platform: string = process.platform): boolean {
  return platform === 'linux' && env.SANDBOX_PROFILE !== 'local'
}

/** The options missing from `started`, the names of the environment the process started with. */
export function missingOptions(started: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(ALLOCATOR_OPTIONS).filter(([name]) => !started.includes(name)))
}

/** NUL-separated strings (a /proc file), the empty string after the last NUL left out. */
const nulSeparated = (path: string) => readFileSync(path, 'utf8').split('\0').slice(0, -1)

/**
 * Executes the process again where an option is missing from the environment it started with, which
 * is what mimalloc read (a `.env` file Bun loaded later is not). What the process's environment holds,
 * that file's values included, wins over the options. Where that fails, a warning, and the server
 * runs with the allocator as Bun starts it.
 */
export function startWithAllocatorOptions(): void {
  try {
    const started = nulSeparated('/proc/self/environ').map((entry) => entry.slice(0, entry.indexOf('=')))
    const missing = missingOptions(started)
    if (Object.keys(missing).length === 0) return
    process.execve!(process.execPath, nulSeparated('/proc/self/cmdline'), { ...missing, ...process.env })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    console.error(logLine({ level: 'warn', msg: 'started without the allocator options', reason }))
  }
}
