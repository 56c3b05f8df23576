/** @module One measured row: a server started, warmed up, loaded by wrk, optionally at half its rate, stopped. */
import { join } from 'node:path'
import { constantRate, unexpected, wrk, type Mode, type RateResult, type WrkResult } from './load'
import type { Options } from './options'
import { writtenBytes, type Harness } from './processes'
import { sleep } from '../test/support/launch'
import { attribute, type Attribution } from './stalls'

export interface Row {
  key: string
  label: string
  server: string
  mode: Mode
  result?: WrkResult
  peakRssMb?: number
  /** CPU seconds the server used per second of the run (1 = one core). */
  serverCpu?: number
  /** At a constant rate: half the rate wrk measured, or a fixed one (`rate`). */
  half?: RateResult
  /** The same constant rate against raw Bun.serve: what the client and the machine alone add (bench/floor.ts). */
  floor?: RateResult
  /** What the constant-rate requests waited behind (bench/stalls.ts). */
  stalls?: Attribution
  skipped?: string
}

/** A row's constant-rate part: half the rate wrk measured, or a fixed rate in requests per second. */
export type AtRate = 'half' | number

/** The server's CPU time per answered request under wrk, in µs (NaN when not measured). */
export const cpuUsPerRequest = (row: Row) => (row.result && row.serverCpu !== undefined ? (row.serverCpu * 1e6) / row.result.rps : NaN)

export interface Bench {
  harness: Harness
  options: Options
  log(line: string): void
}

/** Where the run keeps a real plan-search answer: the ladder writes it, its lower rungs and the floors send it. */
export const searchAnswerFile = (bench: Bench) => join(bench.harness.work, 'search-answer.json')

/** A server writing less than this a second, for `QUIET_FOR_MS`, has caught up (at most `QUIET_MOST_MS`). */
const QUIET_BYTES_PER_S = 1 << 20
const QUIET_FOR_MS = 1_000
const QUIET_MOST_MS = 60_000

/**
 * Waits until the server has caught up with wrk's saturation, and returns how long that took: its
 * checkpoint thread may still be copying back hundreds of MiB of WAL (bench/findings.md, 2026-11-27),
 * and a window started meanwhile measured the disk catching up, not the server at its rate.
 */
async function caughtUp(pid: number): Promise<number> {
  const started = performance.now()
  let written = writtenBytes(pid)
  let quietSince = started
  while (Number.isFinite(written) && performance.now() - started < QUIET_MOST_MS) {
    await sleep(250)
    const now = writtenBytes(pid)
    if (now - written > QUIET_BYTES_PER_S / 4) quietSince = performance.now()
    written = now
    if (performance.now() - quietSince >= QUIET_FOR_MS) break
  }
  return performance.now() - started
}

/**
 * Starts the row's server, measures it, stops it; a failure is kept in the row, not thrown. With
 * `atRate`, the server traces its stalls (src/stall-trace.ts; on Bun, JavaScriptCore logs its
 * collections too) and the constant-rate part's are attributed.
 */
export async function measure(bench: Bench, row: Row, command: string[], env: Record<string, string> = {}, atRate?: AtRate): Promise<Row> {
  const { harness, options, log } = bench
  log(`- ${row.key} ${row.label} (${row.server}): starting`)
  const trace = join(harness.work, `${row.key}.stalls.jsonl`)
  const traced: Record<string, string> = atRate === undefined ? {} : { SANDBOX_STALL_TRACE: trace, BUN_JSC_logGC: '1' }
  let server
  try {
    server = await harness.startServer({ name: row.key, command, env: { ...env, ...traced } })
  } catch (error) {
    row.skipped = `failed: ${String(error).split('\n')[0]}`
    log(String(error))
    return row
  }
  try {
    const load = { connections: options.connections }
    if (options.warmup > 0) await wrk(harness, server.url, row.mode, options.warmup, load)
    const cpuBefore = server.cpu()
    const result = (row.result = await wrk(harness, server.url, row.mode, options.duration, load))
    row.serverCpu = (server.cpu() - cpuBefore) / (result.duration_us / 1e6)
    log(
      `  ${result.rps.toFixed(0)} req/s, p50 ${(result.p50_us / 1000).toFixed(2)} ms, p99 ${(result.p99_us / 1000).toFixed(2)} ms, ` +
        `2xx ${result.n2xx}, 429 ${result.n429}, unexpected ${unexpected(row.mode, result)}`,
    )
    if (atRate !== undefined) {
      const rate = atRate === 'half' ? Math.max(1, Math.floor(result.rps / 2)) : atRate
      const waited = await caughtUp(server.pid)
      log(
        `  constant rate ${rate} req/s for ${options.duration} s, after ${(waited / 1000).toFixed(1)} s catching up with wrk and ${options.warmup} s at that rate`,
      )
      row.half = await constantRate(harness, server, row.mode, rate, options.duration, options.warmup)
      log(
        `  p50 ${row.half.p50_ms} ms, p99 ${row.half.p99_ms} ms, max ${row.half.max_ms} ms, achieved ${row.half.achieved_rate} req/s, non-2xx ${row.half.non2xx}, ` +
          `server CPU ${Math.round(row.half.server_cpu * 100)}% (${row.half.server_cpu_us_per_request} µs / request)`,
      )
    }
    row.peakRssMb = server.peakRssMb()
  } finally {
    await server.stop()
  }
  // Once stopped: the server writes what is left of its trace on the way out.
  if (row.half) {
    row.stalls = attribute(trace, server.logFile, row.half.window, row.half.slow, { requests: row.half.completed, clientStalls: row.half.client_stalls })
  }
  return row
}
