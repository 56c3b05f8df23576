/**
 * @module Where the request thread's time goes between requests, for the benchmark's stall
 * attribution (bench/stalls.ts). Off unless `SANDBOX_STALL_TRACE` names a file; then a timer due
 * every millisecond measures how late the event loop runs it (each lateness of `STALL_MS` or more
 * is a stall: nothing ran on time during it), and the housekeeping the server does on its own
 * (write-behind rounds, transactions, sweep batches, checkpoints) is timed as spans, as are garbage
 * collections where the runtime reports them (Node, Deno; on Bun, JavaScriptCore's log does:
 * `BUN_JSC_logGC=1`). All are appended to the file as JSON lines, `at` in milliseconds since the
 * epoch, once a second. On Linux each stall also says how long the thread ran during it and how
 * long it waited for the core (`/proc/thread-self/schedstat`): what is neither, it spent off the
 * core, blocked in the kernel. Only that tells a loop busy with its own work from one whose core
 * another thread or process had.
 * Off, `timed` costs one comparison.
 */
import { appendFileSync, closeSync, openSync, readSync } from 'node:fs'
import { PerformanceObserver } from 'node:perf_hooks'

/** A lateness of the loop worth a line: requests waiting this long are what the tail is made of. */
const STALL_MS = 2
/** Spans shorter than this are not written: they cannot explain a stall. */
const SPAN_MS = 0.5

/**
 * Spans the attribution (bench/stalls.ts) tells apart: work on the checkpoint thread, beside the
 * loop, and a transaction's wait for the write lock, which leaves the loop free.
 */
export const STALL_SPANS = {
  checkpoint: 'checkpoint (worker thread)',
  restart: 'WAL restart (worker thread, write lock held)',
  restartGivenUp: 'WAL restart given up (worker thread, readers or writer busy)',
  lockWait: 'waiting for the write lock',
} as const

/** `ran`, `waited`: of the stall, the ms the thread ran and waited for the core (Linux only). */
export type TraceLine = { stall: number; at: number; ran?: number; waited?: number } | { span: string; at: number; ms: number }

let lines: string[] | null = null

const epochMs = (fromNow: number) => performance.timeOrigin + fromNow

/** Records a span of work that ran on another thread (the checkpoint worker): begun `at` (ms since the epoch), `ms` long. */
export function spanOfThread(name: string, at: number, ms: number): void {
  if (lines && ms >= SPAN_MS) lines.push(JSON.stringify({ span: name, at, ms }))
}

/** Records the span `name` from `started` (a `performance.now()`) until now. */
export function spanSince(name: string, started: number): void {
  if (!lines) return
  const ms = performance.now() - started
  if (ms >= SPAN_MS) lines.push(JSON.stringify({ span: name, at: epochMs(started), ms }))
}

/** `work`, timed as the span `name` while tracing; its synchronous part only (what holds the thread). */
export function timed<T>(name: string, work: () => T): T {
  if (!lines) return work()
  const started = performance.now()
  try {
    return work()
  } finally {
    spanSince(name, started)
  }
}

/** Starts tracing into `path` (appended to); the returned function writes what is pending and stops. */
export function startStallTrace(path: string): () => void {
  lines = []
  const schedule = threadSchedule()
  let expected = performance.now() + 1
  let before = schedule?.read()
  const sample = setInterval(() => {
    const now = performance.now()
    const late = now - expected
    const after = schedule?.read()
    if (late >= STALL_MS) {
      // Over the stall and the millisecond before it, a sample's interval: close enough to split it.
      const split = before && after ? { ran: after.ran - before.ran, waited: after.waited - before.waited } : {}
      lines?.push(JSON.stringify({ stall: late, at: epochMs(expected), ...split }))
    }
    before = after
    expected = now + 1
  }, 1)
  const write = () => {
    if (!lines?.length) return
    const pending = lines
    lines = []
    timed('stall trace written', () => appendFileSync(path, `${pending.join('\n')}\n`))
  }
  const writer = setInterval(write, 1000)
  for (const timer of [sample, writer]) (timer as { unref?: () => void }).unref?.()
  const collections = observeCollections()
  return () => {
    collections?.disconnect()
    schedule?.close()
    clearInterval(sample)
    clearInterval(writer)
    write()
    lines = null
  }
}

/** Each garbage collection as a span, where the runtime reports them to a PerformanceObserver. */
function observeCollections(): PerformanceObserver | null {
  // Bun's types omit `supportedEntryTypes`; Bun has it, without 'gc'.
  const { supportedEntryTypes } = PerformanceObserver as unknown as { supportedEntryTypes: readonly string[] }
  if (!supportedEntryTypes.includes('gc')) return null
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) spanOfThread('garbage collection', epochMs(entry.startTime), entry.duration)
  })
  observer.observe({ entryTypes: ['gc'] })
  return observer
}

/**
 * The calling thread's time on the core and waiting for it, in ms since it began (Linux's
 * `/proc/thread-self/schedstat`: both in ns, then the count of slices); null where it cannot be read
 * (not Linux; Deno, which opens it only with `--allow-all`). One read is a single `pread` of the file
 * opened once, about 1.5 µs.
 */
function threadSchedule(): { read(): { ran: number; waited: number } | undefined; close(): void } | null {
  let fd: number
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r')
  } catch {
    return null
  }
  const buffer = new Uint8Array(96)
  const text = new TextDecoder()
  return {
    read() {
      try {
        const [ran, waited] = text.decode(buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0))).split(' ')
        return { ran: Number(ran) / 1e6, waited: Number(waited) / 1e6 }
      } catch {
        return undefined
      }
    },
    close: () => closeSync(fd),
  }
}
