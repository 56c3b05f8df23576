/**
 * @module Where the request thread's time goes between requests, for the benchmark's stall
 * attribution (bench/stalls.ts). Off unless `SANDBOX_STALL_TRACE` names a file; then a timer due
 * every millisecond measures how late the event loop runs it (each lateness of `STALL_MS` or more
 * is a stall: nothing ran on time during it), and the housekeeping the server does on its own
 * (write-behind rounds, transactions, sweep batches, checkpoints) is timed as spans, as are garbage
 * collections where the runtime reports them (Node, Deno; on Bun, JavaScriptCore's log does:
 * `BUN_JSC_logGC=1`). All are appended to the file as JSON lines, `at` in milliseconds since the
 * epoch, once a second.
 * Off, `timed` costs one comparison.
 */
import { appendFileSync } from 'node:fs'
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

export type TraceLine = { stall: number; at: number } | { span: string; at: number; ms: number }

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
  let expected = performance.now() + 1
  const sample = setInterval(() => {
    const now = performance.now()
    const late = now - expected
    if (late >= STALL_MS) lines?.push(JSON.stringify({ stall: late, at: epochMs(expected) }))
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
