/**
 * @module Stall attribution (issue 36): what the requests of a half-rate row waited behind. The
 * server runs with `SANDBOX_STALL_TRACE` (src/stall-trace.ts: every lateness of its event loop of
 * 2 ms or more, and its housekeeping timed as spans) and, on Bun, `BUN_JSC_logGC=1` (JavaScriptCore
 * prints each collection and its pause to stderr, without a time: it is placed at the access-log line
 * printed after it). The client lists every request of 5 ms or more (bench/constant-rate.ts).
 * Each stall is put down first by where the loop's thread was during it (Linux: the trace says how
 * long it ran and waited for the core): waiting for the core, while other threads or processes had
 * it, is a cause of its own; otherwise the stall goes to what overlapped it most, a span of the
 * server's own work or a collection, or, when nothing timed overlapped it, to the requests themselves
 * (their handling, queued) where the thread ran, or to the kernel where it was off the core. The
 * client also lists each time its own loop woke 2 ms or more late: a slow request that overlapped
 * such a lateness most, one not during or just after a server stall, was held back by the load
 * generator (the machine), not by the server.
 */
import { existsSync, readFileSync } from 'node:fs'
import { STALL_SPANS } from '../src/stall-trace'

export interface Interval {
  name: string
  at: number
  ms: number
}

/** A stall, with the ms its thread ran and waited for the core over it where the trace says (Linux). */
type Stall = Interval & { ran?: number; waited?: number }

export interface Attribution {
  /** The client's clock window (ms since the epoch). */
  window: [number, number]
  stalls: (Stall & { cause: string })[]
  spans: Interval[]
  /** Per cause: spans (or collections) in the window, their total and longest, and the stalls of ≥ 5 ms and slow requests put down to it. */
  sources: Map<string, { count: number; totalMs: number; longestMs: number; stalls: number; slow: number }>
  slowRequests: number
  /** The server's collections in the window and how much its heap grew between them (Bun only). */
  allocation: Allocation | null
}

export interface Allocation {
  collections: number
  /** What the heap grew by between collections (close to what was allocated: readAllocation). */
  grownKb: number
  /** The requests the client completed in the window. */
  requests: number
}

/** What nothing timed overlapped: the requests' own handling, one after another. */
export const UNTIMED = 'requests (nothing timed overlapped)'
/** Most of the stall, the loop's thread was ready to run and another thread or process had the core. */
export const CORE_TAKEN = 'waiting for the core (other threads or processes ran)'
/** The load generator's own loop ran late and held requests back (bench/constant-rate.ts): the machine, not the server. */
export const CLIENT_LATE = 'the load generator (its own loop ran late)'
/** How long after a server stall the client may still be reading the answers it released. */
const BURST_MS = 5
/** Most of the stall, the loop's thread was off the core, blocked in the kernel, and nothing timed overlapped. */
export const BLOCKED = 'blocked in the kernel (nothing timed overlapped)'
/** Work on a thread of its own (on the server's core: it overlaps, it does not block the loop). */
const BESIDE = new Set<string>([STALL_SPANS.checkpoint, STALL_SPANS.restart, STALL_SPANS.restartGivenUp])
/** A wait of one request that leaves the loop free: a cause for the requests that waited, not for a stall. */
const WAITS = new Set<string>([STALL_SPANS.lockWait])
const STALL_COUNTED_MS = 5

const overlap = (a: { at: number; ms: number }, b: { at: number; ms: number }) => Math.max(0, Math.min(a.at + a.ms, b.at + b.ms) - Math.max(a.at, b.at))

/** The trace file's stalls and spans. */
function readTrace(file: string): { stalls: Stall[]; spans: Interval[] } {
  const stalls: Stall[] = []
  const spans: Interval[] = []
  if (!existsSync(file)) return { stalls, spans }
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue
    const entry = JSON.parse(line) as { stall?: number; span?: string; at: number; ms?: number; ran?: number; waited?: number }
    if (entry.stall !== undefined) stalls.push({ name: 'stall', at: entry.at, ms: entry.stall, ran: entry.ran, waited: entry.waited })
    else spans.push({ name: entry.span!, at: entry.at, ms: entry.ms! })
  }
  return { stalls, spans }
}

/**
 * The server's log (stdout and stderr in one file, in the order written) as its untimed lines
 * (JavaScriptCore's collections among them), each with the time of the next timed line: what an
 * untimed line tells of ended before that line was written.
 */
function untimedLines(logFile: string): { line: string; at: number }[] {
  if (!existsSync(logFile)) return []
  const placed: { line: string; at: number }[] = []
  let waiting: string[] = []
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const time = /^\{"time":"([^"]+)"/.exec(line)
    if (!time) {
      if (line) waiting.push(line)
      continue
    }
    const at = Date.parse(time[1]!)
    for (const untimed of waiting) placed.push({ line: untimed, at })
    waiting = []
  }
  return placed
}

/** JavaScriptCore's collections from the server's log: each pause (`p=…ms`) is placed just before the next timed line. */
export function readCollections(logFile: string): Interval[] {
  const collections: Interval[] = []
  for (const { line, at } of untimedLines(logFile)) {
    const pause = /^\[GC<[^>]*>: .*? p=([\d.]+)ms/.exec(line)
    const sweep = /Full sweep: .*?, ([\d.]+)ms/.exec(line)
    const [name, found] = pause ? ['garbage collection', pause] : ['garbage collection (full sweep)', sweep]
    if (!found) continue
    const ms = Number(found[1])
    collections.push({ name, at: at - ms, ms })
  }
  return collections
}

/**
 * How much the server's JavaScript heap grew between collections in the window, from the same log:
 * a collection starts at the heap's capacity (`START M 53199kb`, or `START C` where the collector's
 * thread runs it) and ends at what it kept (`=> 34555kb, p=… END]`), so each start less the end
 * before it is what was added meanwhile. Close to what was allocated, not equal: space freed in
 * blocks the heap already had is reused without growing it (0.68–0.98 of JavaScriptCore's own "bytes
 * allocated this cycle" for the nine collections of 2026-11-28's plan-search logs that gave both).
 * The heap that grew most is the server's (the checkpoint worker has its own); placed, as pauses
 * are, at the next timed line.
 */
export function readAllocation(logFile: string, window: [number, number], requests: number): Allocation | null {
  const grown: { heap: string; at: number; kb: number }[] = []
  const keptKb = new Map<string, number>()
  for (const { line, at } of untimedLines(logFile)) {
    const gc = /^\[GC<([^>]*)>: (.*)/.exec(line)
    if (!gc) continue
    const [, heap = '', text = ''] = gc
    const start = /^START [MC] (\d+)kb/.exec(text)
    if (start && keptKb.has(heap)) grown.push({ heap, at, kb: Number(start[1]) - keptKb.get(heap)! })
    const end = /=> (\d+)kb, p=.*END\]/.exec(text)
    if (end) keptKb.set(heap, Number(end[1]))
  }
  const totals = new Map<string, number>()
  for (const { heap, kb } of grown) totals.set(heap, (totals.get(heap) ?? 0) + kb)
  const server = [...totals.entries()].sort(([, a], [, b]) => b - a)[0]?.[0]
  if (server === undefined) return null
  const inWindow = grown.filter((entry) => entry.heap === server && entry.at >= window[0] && entry.at <= window[1])
  return { collections: inWindow.length, grownKb: inWindow.reduce((sum, entry) => sum + entry.kb, 0), requests }
}

/** What each stall in the window and each slow request waited behind. */
export function attribute(
  traceFile: string,
  logFile: string,
  window: [number, number],
  slow: [number, number][],
  { requests = 0, clientStalls = [] }: { requests?: number; clientStalls?: [number, number][] } = {},
): Attribution {
  const inWindow = (interval: Interval) => interval.at + interval.ms >= window[0] && interval.at <= window[1]
  const trace = readTrace(traceFile)
  const spans = [...trace.spans, ...readCollections(logFile)].filter(inWindow)
  const sources: Attribution['sources'] = new Map()
  const source = (name: string) => {
    let entry = sources.get(name)
    if (!entry) sources.set(name, (entry = { count: 0, totalMs: 0, longestMs: 0, stalls: 0, slow: 0 }))
    return entry
  }
  /** One more time the source took: its count, total and longest. */
  const tally = ({ name, ms }: Interval) => {
    const entry = source(name)
    entry.count++
    entry.totalMs += ms
    entry.longestMs = Math.max(entry.longestMs, ms)
  }
  for (const span of spans) tally(span)
  /** The span beside the loop (or, `beside` false, on it) that overlapped the stall most, if any did. */
  const mostOverlapping = (stall: Interval, beside: boolean): string | null => {
    let best: { name: string | null; overlap: number } = { name: null, overlap: 0 }
    for (const span of spans) {
      if (WAITS.has(span.name) || BESIDE.has(span.name) !== beside) continue
      const shared = overlap(span, stall)
      if (shared > best.overlap) best = { name: span.name, overlap: shared }
    }
    return best.name
  }
  const causeOf = (stall: Stall): string => {
    const where = whereTheThreadWas(stall)
    if (where === 'waited') return CORE_TAKEN
    const onLoop = mostOverlapping(stall, false)
    if (onLoop) return onLoop
    // A thread beside the loop is a cause only where the loop's thread did not run its own work.
    if (where === 'ran') return UNTIMED
    return mostOverlapping(stall, true) ?? (where === 'blocked' ? BLOCKED : UNTIMED)
  }
  const stalls = trace.stalls.filter(inWindow).map((stall) => ({ ...stall, cause: causeOf(stall) }))
  for (const stall of stalls) if (stall.ms >= STALL_COUNTED_MS) source(stall.cause).stalls++
  // A slow request waited behind the stall, the wait for the write lock, or the client's own lateness that overlapped it most.
  const waits = spans.filter((span) => WAITS.has(span.name)).map((span) => ({ ...span, cause: span.name }))
  // A client late during a server stall, or just after one, was most likely reading the burst of
  // answers the stall released: that lateness is the server's doing, and is left out.
  const afterStall = (late: Interval) => stalls.some((stall) => overlap({ at: stall.at, ms: stall.ms + BURST_MS }, late) > 0)
  const late = clientStalls.map(([at, ms]) => ({ name: CLIENT_LATE, at, ms, cause: CLIENT_LATE })).filter((late) => inWindow(late) && !afterStall(late))
  for (const lateness of late) tally(lateness)
  for (const [at, ms] of slow) {
    const request = { at, ms }
    let best: { cause: string; overlap: number } = { cause: UNTIMED, overlap: 0 }
    for (const candidate of [...stalls, ...waits, ...late]) {
      const shared = overlap(candidate, request)
      if (shared > best.overlap) best = { cause: candidate.cause, overlap: shared }
    }
    source(best.cause).slow++
  }
  return { window, stalls, spans, sources, slowRequests: slow.length, allocation: readAllocation(logFile, window, requests) }
}

/**
 * Where the loop's thread spent most of the stall: running, waiting for the core, or neither (off the
 * core, blocked); null where the trace does not say. The split covers the stall and the sample's
 * millisecond before it.
 */
function whereTheThreadWas(stall: Stall): 'ran' | 'waited' | 'blocked' | null {
  if (stall.ran === undefined || stall.waited === undefined) return null
  const blocked = offCore(stall)
  if (stall.waited >= stall.ran && stall.waited >= blocked) return 'waited'
  return stall.ran >= blocked ? 'ran' : 'blocked'
}

/** Of a stall with its split, and the sample's millisecond before it: the ms its thread was off the core. */
const offCore = (stall: Stall) => Math.max(0, stall.ms + 1 - stall.ran! - stall.waited!)

/** Where the loop's thread spent the stalls, in all, where the trace says (Linux). */
function threadSplit(stalls: Stall[]): string {
  const split = stalls.filter((stall) => stall.ran !== undefined && stall.waited !== undefined)
  if (split.length === 0) return ''
  const sum = (part: (stall: Stall) => number) => split.reduce((total, stall) => total + part(stall), 0).toFixed(0)
  return (
    ` Over the stalls (each with the millisecond before it), the loop's thread ran ${sum((stall) => stall.ran!)} ms, ` +
    `waited ${sum((stall) => stall.waited!)} ms for the core, and was off it ${sum(offCore)} ms.`
  )
}

/** How much the server's heap grew between collections, where the log says (Bun). */
function allocationSentence(allocation: Allocation | null): string {
  if (!allocation || allocation.collections === 0 || allocation.requests === 0) return ''
  const { collections, grownKb, requests } = allocation
  return ` The server's JavaScript heap was collected ${collections} times and grew by ${(grownKb / 1024).toFixed(0)} MB between collections, ${(grownKb / requests).toFixed(1)} KB a request.`
}

/** The attribution as a Markdown table, busiest cause first. */
export function attributionTable(title: string, result: Attribution): string {
  const stallMs = result.stalls.reduce((sum, stall) => sum + stall.ms, 0)
  const longest = result.stalls.reduce((max, stall) => Math.max(max, stall.ms), 0)
  const rows = [...result.sources.entries()]
    .sort(([, a], [, b]) => b.slow - a.slow || b.stalls - a.stalls || b.totalMs - a.totalMs)
    .map(
      ([name, s]) =>
        `| ${name} | ${s.count || ''} | ${s.count ? s.totalMs.toFixed(0) : ''} | ${s.count ? s.longestMs.toFixed(1) : ''} | ${s.stalls} | ${s.slow} |`,
    )
  return [
    `**${title}**: ${result.stalls.length} stalls of 2 ms or more (${stallMs.toFixed(0)} ms in all, longest ${longest.toFixed(1)} ms), ` +
      `${result.stalls.filter((stall) => stall.ms >= STALL_COUNTED_MS).length} of 5 ms or more; ${result.slowRequests} requests took 5 ms or more.` +
      threadSplit(result.stalls) +
      allocationSentence(result.allocation),
    '',
    '| source | times | total ms | longest ms | stalls ≥ 5 ms it overlapped most | requests ≥ 5 ms that waited behind it |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n')
}

/** `bun bench/stalls.ts TRACE SERVER_LOG RESULT_JSON`: the table for one constant-rate result (its BENCH_JSON object). */
if (import.meta.main) {
  const [trace, log, result] = process.argv.slice(2)
  const rate = JSON.parse(readFileSync(result!, 'utf8').replace(/^BENCH_JSON /, '')) as {
    window: [number, number]
    slow: [number, number][]
    completed: number
    client_stalls?: [number, number][]
  }
  console.log(attributionTable(result!, attribute(trace!, log!, rate.window, rate.slow, { requests: rate.completed, clientStalls: rate.client_stalls })))
}
