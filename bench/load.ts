/**
 * @module The load: wrk (closed loop, bench/sandbox.lua: one partner per connection) and the
 * constant-rate client (open loop, bench/constant-rate.ts). Each run gets fresh client networks, so
 * every counter starts empty.
 */
import { join } from 'node:path'
import { BUN, pinned, type Harness } from './processes'

export type Mode = 'search' | 'issue' | 'modify' | 'limited'

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
/** Trip dates relative to today: every run searches the same trip. */
export const DATES = { start: day(30), end: day(40), end2: day(45) }

let nextNet = 1
/** A fresh second octet for the 10.x.y.z networks of one load run. */
const freshNet = () => nextNet++

export interface WrkResult {
  requests: number
  duration_us: number
  p50_us: number
  p90_us: number
  p99_us: number
  max_us: number
  n2xx: number
  n429: number
  nother: number
  nsetup: number
  socket_errors: number
  timeouts: number
  first_bad: string
  rps: number
  /** CPU the load generator used per second of the run (1 = one core busy). */
  wrkCpu: number
}

export interface RateResult {
  target_rate: number
  scheduled: number
  completed: number
  non2xx: number
  first_bad: string
  achieved_rate: number
  p50_ms: number
  p99_ms: number
  max_ms: number
  dispatcher_max_lag_ms: number
  /** The server's CPU while the clock ran (1 = one core), and per answered request. */
  server_cpu: number
  server_cpu_us_per_request: number
  /** When the clock ran, and each request of 5 ms or more: scheduled at, took (ms; times since the epoch). */
  window: [number, number]
  slow: [number, number][]
  /** Each time the client's own loop ran 2 ms or more late: began at, lasted (ms; since the epoch). */
  client_stalls: [number, number][]
}

export const WRK = Bun.which('wrk')

/** The `BENCH_JSON {...}` line a load tool prints. */
async function benchJson<T>(proc: ReturnType<Harness['spawn']>, tool: string): Promise<T> {
  const [out, err] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr as ReadableStream).text(), proc.exited])
  const line = out.split('\n').find((entry) => entry.startsWith('BENCH_JSON '))
  if (!line) throw new Error(`${tool} gave no result (exit ${proc.exitCode}):\n${out}\n${err}`)
  return JSON.parse(line.slice('BENCH_JSON '.length)) as T
}

export async function wrk(harness: Harness, url: string, mode: Mode, seconds: number, options: { connections: number; pin?: boolean }): Promise<WrkResult> {
  const { connections } = options
  const command = [
    WRK!,
    '-t',
    String(connections),
    '-c',
    String(connections),
    '-d',
    `${seconds}s`,
    '--timeout',
    '5s',
    '--latency',
    '-s',
    join(import.meta.dir, 'sandbox.lua'),
    url.replace(/\/$/, ''),
  ]
  const proc = harness.spawn(pinned(0, command, options.pin ?? true), {
    env: { ...process.env, BENCH_MODE: mode, BENCH_START: DATES.start, BENCH_END: DATES.end, BENCH_END2: DATES.end2, BENCH_NET: String(freshNet()) },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const result = await benchJson<Omit<WrkResult, 'rps' | 'wrkCpu'>>(proc, 'wrk')
  const cpu = Number(proc.resourceUsage()?.cpuTime.total ?? 0n) / 1e6
  const seconds_ = result.duration_us / 1e6
  return { ...result, rps: result.requests / seconds_, wrkCpu: cpu / seconds_ }
}

export async function constantRate(
  harness: Harness,
  server: { url: string; pid: number },
  mode: Mode,
  rate: number,
  seconds: number,
  warmupSeconds = 0,
): Promise<RateResult> {
  const command = [
    BUN,
    join(import.meta.dir, 'constant-rate.ts'),
    '--url',
    server.url,
    '--mode',
    mode,
    '--rate',
    String(rate),
    '--duration',
    String(seconds),
    '--warmup',
    String(warmupSeconds),
    '--lanes',
    '8',
    '--net',
    String(freshNet()),
    '--pid',
    String(server.pid),
    '--start',
    DATES.start,
    '--end',
    DATES.end,
    '--end2',
    DATES.end2,
  ]
  return benchJson<RateResult>(harness.spawn(pinned(0, command), { stdout: 'pipe', stderr: 'pipe' }), 'constant-rate')
}

/** Answers wrk counts as wrong for the mode: anything but 2xx (429 too, except on the 429 path), and socket errors. */
export function unexpected(mode: Mode, result: WrkResult): number {
  const wrongStatus = mode === 'limited' ? result.nother : result.nother + result.n429
  return wrongStatus + result.socket_errors + result.timeouts
}
