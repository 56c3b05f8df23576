/** @module One measured row: a server started, warmed up, loaded by wrk, optionally at half its rate, stopped. */
import { join } from 'node:path'
import { constantRate, unexpected, wrk, type Mode, type RateResult, type WrkResult } from './load'
import type { Options } from './options'
import type { Harness } from './processes'
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

/**
 * Starts the row's server, measures it under wrk, stops it; a failure is kept in the row, not thrown.
 * With `atRate`, then the constant-rate part (`atRate`).
 */
export async function measure(bench: Bench, row: Row, command: string[], env: Record<string, string> = {}, atRate?: AtRate): Promise<Row> {
  const { harness, options, log } = bench
  log(`- ${row.key} ${row.label} (${row.server}): starting`)
  const server = await started(bench, row, row.key, command, env)
  if (!server) return row
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
    row.peakRssMb = server.peakRssMb()
  } finally {
    await server.stop()
  }
  if (atRate !== undefined) await measureAtRate(bench, row, command, env, atRate === 'half' ? Math.max(1, Math.floor(row.result!.rps / 2)) : atRate)
  return row
}

/**
 * The constant-rate part: the server started again on the same database, sent the rate for the
 * warm-up unmeasured, then measured, tracing its stalls (src/stall-trace.ts; on Bun, JavaScriptCore
 * logs its collections too), which are then attributed. A fresh process, so that the window shows the
 * server's steady state at that rate, not the disk still catching up with wrk's saturation (the WAL
 * wrk left, copied back and restarted during the window: bench/findings.md).
 */
async function measureAtRate(bench: Bench, row: Row, command: string[], env: Record<string, string>, rate: number): Promise<void> {
  const { harness, options, log } = bench
  const name = `${row.key}-rate`
  const trace = join(harness.work, `${name}.stalls.jsonl`)
  const traced = { SANDBOX_DB_PATH: join(harness.work, `${row.key}.db`), ...env, SANDBOX_STALL_TRACE: trace, BUN_JSC_logGC: '1' }
  const server = await started(bench, row, name, command, traced)
  if (!server) return
  try {
    log(`  constant rate ${rate} req/s for ${options.duration} s after ${options.warmup} s at that rate`)
    row.half = await constantRate(harness, server, row.mode, rate, options.duration, options.warmup)
    log(
      `  p50 ${row.half.p50_ms} ms, p99 ${row.half.p99_ms} ms, max ${row.half.max_ms} ms, achieved ${row.half.achieved_rate} req/s, non-2xx ${row.half.non2xx}, ` +
        `server CPU ${Math.round(row.half.server_cpu * 100)}% (${row.half.server_cpu_us_per_request} µs / request)`,
    )
    row.peakRssMb = Math.max(row.peakRssMb ?? 0, server.peakRssMb())
  } finally {
    await server.stop()
  }
  // Once stopped: the server writes what is left of its trace on the way out.
  row.stalls = attribute(trace, server.logFile, row.half.window, row.half.slow)
}

/** The row's server started as `name`, or undefined with the failure kept in the row. */
async function started(bench: Bench, row: Row, name: string, command: string[], env: Record<string, string>) {
  try {
    return await bench.harness.startServer({ name, command, env })
  } catch (error) {
    row.skipped = `failed: ${String(error).split('\n')[0]}`
    bench.log(String(error))
    return undefined
  }
}
