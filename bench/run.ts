/**
 * The benchmark harness (issue #5): throughput and latency of every path and every deploy target
 * side by side against a bare Bun.serve ceiling, latency at half the measured maximum, scale figures
 * (RSS and file size after 100,000 sessions, expiry sweep, cold start) and the multi-process mode.
 * Prints Markdown tables and PASS/MISS against the targets. Needs `wrk` (Debian: `apt-get install -y
 * wrk`) and, for the binary/Deno/Node rows and the cold start, `npm run build`.
 *
 *   bun bench/run.ts [--duration 10] [--warmup 2] [--connections 16] [--sessions 100000] [--quick]
 *                    [--only a,b,c,d,e,f,workers,scale] [--src DIR]
 *
 *   --duration     seconds of each measured run (wrk and the constant-rate runs); default 10
 *   --warmup       seconds of unmeasured load on each server before its measured run; default 2
 *   --connections  wrk threads = connections (one partner each); default 16
 *   --sessions     sessions seeded for the scale figures; default 100000
 *   --quick        skip the scale figures (seeding, RSS, sweep, cold start)
 *   --only         run only these parts (rows a-f, `workers`, `scale`; `a` includes a2); the targets of the others say n/a
 *   --src DIR      run the Bun-source rows (b-e, workers, scale servers) from another checkout's
 *                  src/server.bun.ts, e.g. a worktree of a branch, to compare it with this one
 *
 * Every server is started here on 127.0.0.1 on a free port with a fresh database file in a temporary
 * folder, SANDBOX_TRUST_PROXY=1 (so each wrk thread's X-Forwarded-For is its network) and, for the
 * throughput runs, SANDBOX_RATE_LIMIT=1000000000. Where taskset exists and there are 2 cores or more,
 * servers run on core 1 and the load generators on core 0. Every process started here is stopped
 * at the end, on an error and on Ctrl-C.
 */
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { Subprocess } from 'bun'
import { freePort, runScale, type ScaleResult, type ServerHandle } from './scale'

const ROOT = resolve(import.meta.dir, '..')
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name)
const BUN = process.execPath

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    sessions: { type: 'string', default: '100000' },
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    src: { type: 'string' },
  },
})
const ONLY = args.only ? new Set(args.only.split(',').map((part) => part.trim())) : null
const wanted = (part: string) => !ONLY || ONLY.has(part)
const DURATION = Number(args.duration)
const WARMUP = Number(args.warmup)
const CONNECTIONS = Number(args.connections)
const SESSIONS = Number(args.sessions)
if (!(DURATION > 0) || !(WARMUP >= 0) || !(CONNECTIONS >= 1) || !(SESSIONS >= 1)) {
  console.error('usage: bun bench/run.ts [--duration S] [--warmup S] [--connections N] [--sessions N] [--quick] [--only a,b,c,d,e,f,workers,scale] [--src DIR]')
  process.exit(2)
}

const WRK = Bun.which('wrk')
if (!WRK) {
  console.error('bench: wrk is not installed. Install it with `apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk` (macOS), then run again.')
  process.exit(1)
}
const TASKSET = Bun.which('taskset')
const CORES = navigator.hardwareConcurrency
const PIN = TASKSET !== null && CORES >= 2
const pinned = (core: number, command: string[], pin = true) => (PIN && pin ? [TASKSET!, '-c', String(core), ...command] : command)

// ---------------------------------------------------------------------------------------------
// Processes: every one started here is in `live` until it has exited, and is stopped on the way out.

const live = new Set<Subprocess>()
const WORK = mkdtempSync(join(tmpdir(), 'sandbox-bench-'))
let cleanedUp = false

function cleanup() {
  if (cleanedUp) return
  cleanedUp = true
  for (const proc of live) {
    for (const child of childPids(proc.pid)) killQuietly(child, 'SIGKILL')
    killQuietly(proc.pid, 'SIGKILL')
  }
  rmSync(WORK, { recursive: true, force: true })
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.error(`\nbench: ${signal}, stopping everything it started`)
    cleanup()
    process.exit(130)
  })
}
process.on('exit', cleanup)

function killQuietly(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone
  }
}

/** Direct children of a process (the Bun entry's extra workers), from /proc. */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number))
  } catch {
    return []
  }
}

function spawnTracked(command: string[], options: Parameters<typeof Bun.spawn>[1]): Subprocess {
  const proc = Bun.spawn(command, options)
  live.add(proc)
  void proc.exited.then(() => live.delete(proc))
  return proc
}

const procStatusKb = (pid: number, field: string) => {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  } catch {
    return NaN
  }
}
/** CPU seconds (user + system) a process has used so far. */
const cpuSeconds = (pid: number) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}
const socketCount = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')
      } catch {
        return false
      }
    }).length
  } catch {
    return NaN
  }
}

interface Server extends ServerHandle {
  proc: Subprocess
  peakRssMb(): number
  cpu(): number
}

/** Starts a server on a free loopback port with a fresh database, and waits for `GET /healthz`. */
async function startServer(options: { name: string; command: string[]; env?: Record<string, string>; pin?: boolean; expectListening?: number }): Promise<Server> {
  const port = await freePort()
  const logFile = join(WORK, `${options.name}.log`)
  const fd = openSync(logFile, 'w')
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SANDBOX_DB_PATH: join(WORK, `${options.name}.db`),
    SANDBOX_TRUST_PROXY: '1',
    // The production window (10 minutes) with a limit no run reaches: every request is still checked
    // and counted, and each counter holds every hit of the run.
    SANDBOX_RATE_LIMIT: '1000000000',
    ...options.env,
  }
  const proc = spawnTracked(pinned(1, options.command, options.pin ?? true), { cwd: ROOT, env, stdin: 'ignore', stdout: fd, stderr: fd })
  closeSync(fd)
  const url = `http://127.0.0.1:${port}/`
  const started = performance.now()
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${options.name} exited during start-up:\n${readFileSync(logFile, 'utf8').slice(-2000)}`)
    }
    if (performance.now() - started > 30_000) throw new Error(`${options.name} did not answer /healthz within 30 s`)
    try {
      const response = await fetch(`${url}healthz`)
      await response.arrayBuffer()
      const listening = readFileSync(logFile, 'utf8').split('\n').filter((line) => line.includes('"msg":"listening"')).length
      if (response.ok && listening >= (options.expectListening ?? 0)) break
    } catch {
      // not yet
    }
    await Bun.sleep(20)
  }
  return {
    pid: proc.pid,
    url,
    logFile,
    proc,
    peakRssMb: () => (procStatusKb(proc.pid, 'VmHWM') * 1024) / 1e6,
    cpu: () => [proc.pid, ...childPids(proc.pid)].reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    async stop() {
      const children = childPids(proc.pid)
      proc.kill('SIGTERM')
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)])
      if (!exited) proc.kill('SIGKILL')
      await proc.exited
      for (const child of children) killQuietly(child, 'SIGKILL')
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Load

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const DATES = { start: day(30), end: day(40), end2: day(45) }
let nextNet = 1
/** A fresh second octet for the 10.x.y.z networks of one load run: every counter starts empty. */
const freshNet = () => nextNet++

type Mode = 'search' | 'issue' | 'modify' | 'limited'

interface WrkResult {
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
  wrkCpu: number
}

async function wrk(url: string, mode: Mode, seconds: number, options: { connections?: number; pin?: boolean } = {}): Promise<WrkResult> {
  const connections = options.connections ?? CONNECTIONS
  const command = [WRK!, '-t', String(connections), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '5s', '--latency',
    '-s', join(import.meta.dir, 'sandbox.lua'), url.replace(/\/$/, '')]
  const proc = spawnTracked(pinned(0, command, options.pin ?? true), {
    env: { ...process.env, BENCH_MODE: mode, BENCH_START: DATES.start, BENCH_END: DATES.end, BENCH_END2: DATES.end2, BENCH_NET: String(freshNet()) },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr as ReadableStream).text(), proc.exited])
  const line = out.split('\n').find((entry) => entry.startsWith('BENCH_JSON '))
  if (!line) throw new Error(`wrk gave no result (exit ${proc.exitCode}):\n${out}\n${err}`)
  const result = JSON.parse(line.slice('BENCH_JSON '.length))
  const cpu = Number(proc.resourceUsage()?.cpuTime.total ?? 0n) / 1e6
  return { ...result, rps: result.requests / (result.duration_us / 1e6), wrkCpu: cpu / (result.duration_us / 1e6) }
}

interface RateResult {
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
}

async function constantRate(url: string, mode: Mode, rate: number, seconds: number): Promise<RateResult> {
  const command = [BUN, join(import.meta.dir, 'constant-rate.ts'), '--url', url, '--mode', mode, '--rate', String(rate),
    '--duration', String(seconds), '--lanes', '8', '--net', String(freshNet()),
    '--start', DATES.start, '--end', DATES.end, '--end2', DATES.end2]
  const proc = spawnTracked(pinned(0, command), { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr as ReadableStream).text(), proc.exited])
  const line = out.split('\n').find((entry) => entry.startsWith('BENCH_JSON '))
  if (!line) throw new Error(`constant-rate gave no result (exit ${proc.exitCode}):\n${out}\n${err}`)
  return JSON.parse(line.slice('BENCH_JSON '.length))
}

// ---------------------------------------------------------------------------------------------
// Scenarios

const SANDBOX_BUN = [BUN, args.src ? join(resolve(args.src), 'src/server.bun.ts') : 'src/server.bun.ts']
if (args.src && !existsSync(SANDBOX_BUN[1]!)) {
  console.error(`bench: --src ${args.src}: no src/server.bun.ts there`)
  process.exit(2)
}
const TARGETS = {
  binary: { artefact: 'dist/travel-sandbox', command: [join(ROOT, 'dist/travel-sandbox')] },
  deno: { artefact: 'dist/travel-sandbox.deno.js', command: [bin('deno'), 'run', '--allow-net', '--allow-env', '--allow-read', '--allow-write', 'dist/travel-sandbox.deno.js'] },
  node: { artefact: 'dist/travel-sandbox.node.js', command: ['node', 'dist/travel-sandbox.node.js'] },
}

interface Row {
  key: string
  label: string
  server: string
  mode: Mode
  result?: WrkResult
  peakRssMb?: number
  serverCpu?: number
  half?: RateResult
  skipped?: string
}

const log = (line: string) => console.error(line)
const rows: Row[] = []

/** One server, warmed up, then measured by wrk; optionally then at half its rate; then stopped. */
async function measure(row: Row, command: string[], env: Record<string, string> = {}, halfRate = false): Promise<Row> {
  log(`- ${row.label} (${row.server}): starting`)
  const server = await startServer({ name: row.key, command, env })
  try {
    if (WARMUP > 0) await wrk(server.url, row.mode, WARMUP)
    const cpuBefore = server.cpu()
    row.result = await wrk(server.url, row.mode, DURATION)
    row.serverCpu = (server.cpu() - cpuBefore) / (row.result.duration_us / 1e6)
    log(`  ${row.result.rps.toFixed(0)} req/s, p50 ${(row.result.p50_us / 1000).toFixed(2)} ms, p99 ${(row.result.p99_us / 1000).toFixed(2)} ms, ` +
      `2xx ${row.result.n2xx}, 429 ${row.result.n429}, other ${row.result.nother}, socket errors ${row.result.socket_errors + row.result.timeouts}`)
    if (halfRate) {
      const rate = Math.max(1, Math.floor(row.result.rps / 2))
      log(`  constant rate ${rate} req/s for ${DURATION} s`)
      row.half = await constantRate(server.url, row.mode, rate, DURATION)
      log(`  p50 ${row.half.p50_ms} ms, p99 ${row.half.p99_ms} ms, max ${row.half.max_ms} ms, achieved ${row.half.achieved_rate} req/s, non-2xx ${row.half.non2xx}`)
    }
    row.peakRssMb = server.peakRssMb()
  } finally {
    await server.stop()
  }
  return row
}

/** One real plan-search answer, for the raw server to send back byte for byte. */
async function captureSearchAnswer(): Promise<string> {
  const server = await startServer({ name: 'capture', command: SANDBOX_BUN })
  try {
    const response = await fetch(`${server.url}api/sandbox/plans/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.1' },
      body: JSON.stringify({ trip: { origin_country: 'IN', destination_country: 'FR', start_date: DATES.start, end_date: DATES.end }, travellers: [{ age: 34 }, { age: 8 }], currency: 'EUR' }),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`capture search answered ${response.status}: ${text}`)
    const file = join(WORK, 'search-answer.json')
    writeFileSync(file, text)
    return file
  } finally {
    await server.stop()
  }
}

interface WorkersResult {
  throughput: { workers: number; rps: number; p99_ms: number; non2xx: number; cpuShares: string }[]
  exact: { limit: number; concurrent: number; admitted: number; refused: number; other: number; sockets: string }
}

async function multiProcess(): Promise<WorkersResult> {
  const throughput: WorkersResult['throughput'] = []
  const connections = Math.max(CONNECTIONS, 8)
  for (const workers of [1, 2]) {
    log(`- SANDBOX_WORKERS=${workers}, plan search, no pinning, ${connections} connections`)
    const server = await startServer({ name: `workers-${workers}`, command: SANDBOX_BUN, env: { SANDBOX_WORKERS: String(workers) }, pin: false, expectListening: workers })
    try {
      if (WARMUP > 0) await wrk(server.url, 'search', WARMUP, { connections, pin: false })
      const pids = [server.pid, ...childPids(server.pid)]
      const before = pids.map(cpuSeconds)
      const result = await wrk(server.url, 'search', DURATION, { connections, pin: false })
      const used = pids.map((pid, index) => cpuSeconds(pid) - before[index]!)
      const total = used.reduce((a, b) => a + b, 0)
      throughput.push({
        workers,
        rps: result.rps,
        p99_ms: result.p99_us / 1000,
        non2xx: result.nother + result.n429 + result.socket_errors + result.timeouts,
        cpuShares: used.map((cpu) => `${((cpu / total) * 100).toFixed(0)}%`).join(' / '),
      })
      log(`  ${result.rps.toFixed(0)} req/s, p99 ${(result.p99_us / 1000).toFixed(2)} ms, CPU split ${throughput.at(-1)!.cpuShares}`)
    } finally {
      await server.stop()
    }
  }

  // Exactness: one session, `concurrent` requests at once over as many connections, limit 50.
  const limit = 50
  const concurrent = 200
  log(`- rate limit across 2 workers: SANDBOX_RATE_LIMIT=${limit}, 1 session opened, then ${concurrent} concurrent searches on it`)
  const server = await startServer({ name: 'workers-exact', command: SANDBOX_BUN, env: { SANDBOX_WORKERS: '2', SANDBOX_RATE_LIMIT: String(limit) }, pin: false, expectListening: 2 })
  try {
    const pids = [server.pid, ...childPids(server.pid)]
    const socketsBefore = pids.map(socketCount)
    const headers = { 'content-type': 'application/json', 'x-forwarded-for': '10.250.250.250' }
    const opened = await fetch(`${server.url}api/sandbox/session`, { method: 'POST', headers })
    await opened.arrayBuffer()
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!
    const body = JSON.stringify({ trip: { origin_country: 'IN', destination_country: 'FR', start_date: DATES.start, end_date: DATES.end }, travellers: [{ age: 34 }] })
    const statuses = await Promise.all(Array.from({ length: concurrent }, async () => {
      const response = await fetch(`${server.url}api/sandbox/plans/search`, { method: 'POST', headers: { ...headers, cookie }, body })
      await response.arrayBuffer()
      return response.status
    }))
    const socketsAfter = pids.map(socketCount)
    const admitted = (opened.ok ? 1 : 0) + statuses.filter((status) => status === 200).length
    const exact = {
      limit, concurrent, admitted,
      refused: statuses.filter((status) => status === 429).length,
      other: statuses.filter((status) => status !== 200 && status !== 429).length,
      sockets: socketsAfter.map((after, index) => `+${after - socketsBefore[index]!}`).join(' / '),
    }
    log(`  admitted ${admitted} (session + ${admitted - 1}), refused ${exact.refused}, other ${exact.other}; new sockets per process ${exact.sockets}`)
    return { throughput, exact }
  } finally {
    await server.stop()
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (us: number) => (us / 1000).toFixed(2)
const fmt = (value: number | null | undefined, digits = 0) => (value === null || value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits))

function unexpected(row: Row): number {
  const r = row.result!
  const wrongStatus = row.mode === 'limited' ? r.nother + 0 : r.nother + r.n429
  return wrongStatus + r.socket_errors + r.timeouts
}

function printTables(raw: Row | undefined, scale: ScaleResult | null, workers: WorkersResult | null, elapsed: number) {
  const out: string[] = []
  const load = `${CONNECTIONS} connections (wrk -t ${CONNECTIONS} -c ${CONNECTIONS}), ${DURATION} s each after ${WARMUP} s warm-up`
  out.push(`## Benchmark (${new Date().toISOString().slice(0, 16)}Z, ${process.platform}/${process.arch}, ${CORES} cores, bun ${Bun.version})`)
  out.push('')
  out.push(`Load: ${load}; ${PIN ? 'server pinned to core 1, load generator to core 0 (taskset)' : 'no pinning (taskset missing or 1 core)'}. ` +
    'Each connection is one partner: its own session cookie and X-Forwarded-For network. ' +
    'Figures are NOISY if anything else runs on the machine (load average at start: ' + `${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}).`)
  out.push('')
  out.push('| # | scenario | server | req/s | p50 ms | p99 ms | non-2xx | peak RSS MB | vs raw | server CPU | wrk CPU |')
  out.push('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const row of rows) {
    if (!row.result) {
      out.push(`| ${row.key} | ${row.label} | ${row.server} | ${row.skipped ?? 'failed'} | | | | | | | |`)
      continue
    }
    const r = row.result
    const bad = unexpected(row)
    const non2xx = row.mode === 'limited' ? `${r.n429} (429)${bad ? `, ${bad} other ⚠` : ''}` : bad ? `${bad} ⚠` : '0'
    const ratio = raw?.result ? `${((r.rps / raw.result.rps) * 100).toFixed(0)}%` : 'n/a'
    out.push(`| ${row.key} | ${row.label} | ${row.server} | ${r.rps.toFixed(0)} | ${ms(r.p50_us)} | ${ms(r.p99_us)} | ${non2xx} | ` +
      `${fmt(row.peakRssMb, 1)} | ${ratio} | ${fmt((row.serverCpu ?? NaN) * 100)}% | ${fmt(r.wrkCpu * 100)}%${r.wrkCpu >= 0.9 ? ' ⚑' : ''} |`)
  }
  if (raw?.result && (raw.serverCpu ?? 1) < 0.9 && raw.result.wrkCpu < 0.9) {
    out.push(`\n⚠ row a: neither the raw server (${fmt((raw.serverCpu ?? NaN) * 100)}% CPU) nor wrk (${fmt(raw.result.wrkCpu * 100)}%) kept its core busy: ` +
      'other processes were taking the cores, so the ceiling and every "vs raw" ratio are unreliable in this run.')
  }
  const troubled = rows.filter((row) => row.result && unexpected(row) > 0)
  for (const row of troubled) out.push(`\n⚠ ${row.key} ${row.label}: ${unexpected(row)} unexpected answers or socket errors; first: ${row.result!.first_bad || '(socket errors)'}`)
  out.push('')
  out.push('Row a2 is row a plus what the contract makes every admitted request do: count it in SQLite against a session and a network ' +
    '(the project\'s rateLimitStore on a WAL file, one write transaction); no sandbox row can be faster than it. ' +
    '"vs raw": requests/s as a share of row a. "server CPU": CPU seconds the server used per second of the run (100% = one core busy). ' +
    '"wrk CPU" ⚑ (90% or more): the load generator, not the server, was the limit, so that row is a lower bound (for row a: the true ceiling is higher ' +
    'and every ratio is flattering). Databases live in the temporary folder (TMPDIR); `TMPDIR=/dev/shm` takes the disk and its fsyncs out of the figures.')
  const search = rows.find((row) => row.key === 'b')?.result
  if (search) {
    out.push(`Throughput runs set SANDBOX_RATE_LIMIT=1000000000 with the default 10-minute window: the rate check still runs and counts ` +
      `every request, and each counter holds every hit of the run (about ${Math.round(search.requests / CONNECTIONS).toLocaleString('en')} ` +
      'per connection in the plan search run; at most 30 in production).')
  }

  const halves = rows.filter((row) => row.half)
  if (halves.length) {
    out.push('')
    out.push(`### Latency at half the measured maximum (open loop, constant rate, 8 keep-alive connections, ${DURATION} s, latency from the scheduled send time)`)
    out.push('')
    out.push('| scenario | target req/s | achieved req/s | p50 ms | p99 ms | max ms | non-2xx |')
    out.push('|---|---:|---:|---:|---:|---:|---:|')
    for (const row of halves) {
      const h = row.half!
      out.push(`| ${row.label} | ${h.target_rate} | ${h.achieved_rate} | ${h.p50_ms.toFixed(2)} | ${h.p99_ms.toFixed(2)} | ${h.max_ms.toFixed(2)} | ${h.non2xx}${h.non2xx ? ' ⚠' : ''} |`)
    }
  }

  if (scale) {
    out.push('')
    out.push(`### Scale (${scale.sessions.toLocaleString('en')} sessions, each with a plan search and an issued policy, ` +
      `seeded in-process in ${scale.seedSeconds.toFixed(0)} s through createServices + rates.admit / searchPlans / issuePolicy with a fake clock; not through HTTP)`)
    out.push('')
    out.push('| figure | value |')
    out.push('|---|---:|')
    out.push(`| server RSS on that database after 200 requests (VmRSS / VmHWM) | ${fmt(scale.rssMb * 1.048576, 1)} / ${fmt(scale.hwmMb * 1.048576, 1)} MB |`)
    out.push(`| database file / -wal | ${fmt(scale.dbMb, 1)} / ${fmt(scale.walMb, 1)} MiB |`)
    out.push(`| expiry sweep of ${fmt(scale.sweepPurged)} expired sessions (server log duration_ms) | ${fmt(scale.sweepMs)} ms |`)
    out.push(`| probe plan searches, back to back, that overlapped the sweep: count / p99 / worst / how many ≥ 50 ms (${scale.sweepProbeNon2xx} non-2xx) | ` +
      `${scale.sweepOverlapping} / ${fmt(scale.sweepP99Ms, 1)} ms / ${fmt(scale.sweepWorstMs, 1)} ms / ${scale.sweepOver50} |`)
    out.push(`| binary cold start to first answer (${scale.coldStartRuns} runs): p50 / best | ${fmt(scale.coldStartP50Ms)} / ${fmt(scale.coldStartBestMs)} ms |`)
  }

  if (workers) {
    out.push('')
    out.push(`### Multi-process (SANDBOX_WORKERS; plan search; NO taskset pinning: servers and wrk share both cores; ${Math.max(CONNECTIONS, 8)} connections)`)
    out.push('')
    out.push('| workers | req/s | p99 ms | non-2xx | CPU split per process |')
    out.push('|---:|---:|---:|---:|---|')
    for (const w of workers.throughput) out.push(`| ${w.workers} | ${w.rps.toFixed(0)} | ${w.p99_ms.toFixed(2)} | ${w.non2xx} | ${w.cpuShares} |`)
    const e = workers.exact
    out.push('')
    out.push(`Rate limit across 2 workers: SANDBOX_RATE_LIMIT=${e.limit}; one session opened (1 admitted), then ${e.concurrent} concurrent searches on it over as many connections ` +
      `(new sockets per process: ${e.sockets}): admitted ${e.admitted} in all, refused ${e.refused} with 429, other ${e.other}. ` +
      `${e.admitted === e.limit && e.other === 0 ? 'Exact.' : `NOT exact (expected ${e.limit}).`}`)
  }

  // Targets
  const byKey = (key: string) => rows.find((row) => row.key === key)
  const verdicts: [string, boolean | null, string][] = []
  const ratioTarget = (key: string, name: string, share: number) => {
    const row = byKey(key)
    if (!row?.result || !raw?.result) return verdicts.push([`${name} ≥ ${share * 100}% of raw`, null, 'not measured'])
    const ratio = row.result.rps / raw.result.rps
    const clean = unexpected(row) === 0
    verdicts.push([`${name} ≥ ${share * 100}% of raw`, ratio >= share && clean, `${(ratio * 100).toFixed(0)}%${clean ? '' : ' (with errors)'}`])
  }
  ratioTarget('b', 'plan search', 0.5)
  ratioTarget('c', 'policy issue', 0.35)
  ratioTarget('d', 'modify', 0.35)
  ratioTarget('e', '429 path', 0.7)
  for (const key of ['b', 'c', 'd']) {
    const row = byKey(key)
    verdicts.push([`${row?.label ?? key}: p99 < 10 ms at half the max rate`, row?.half ? row.half.p99_ms < 10 && row.half.non2xx === 0 : null,
      row?.half ? `${row.half.p99_ms.toFixed(2)} ms at ${row.half.target_rate} req/s` : 'not measured'])
  }
  if (scale) {
    const rssMb = Math.max(scale.rssMb, scale.hwmMb) * 1.048576
    verdicts.push([`RSS < 150 MB after ${scale.sessions.toLocaleString('en')} sessions (peak)`, rssMb < 150, `${rssMb.toFixed(1)} MB`])
    verdicts.push(['no request > 50 ms during a sweep', scale.sweepWorstMs === null ? null : scale.sweepWorstMs < 50 && scale.sweepProbeNon2xx === 0,
      scale.sweepWorstMs === null ? 'no sweep seen' : `${scale.sweepWorstMs.toFixed(1)} ms worst`])
    verdicts.push(['binary cold start < 150 ms (p50)', scale.coldStartP50Ms === null ? null : scale.coldStartP50Ms < 150,
      scale.coldStartP50Ms === null ? 'binary not built' : `${scale.coldStartP50Ms.toFixed(0)} ms`])
  }
  if (workers) verdicts.push(['rate limit exact across 2 workers', workers.exact.admitted === workers.exact.limit && workers.exact.other === 0, `${workers.exact.admitted} admitted of limit ${workers.exact.limit}`])
  out.push('')
  out.push('### Targets')
  out.push('')
  out.push('| target | result | measured |')
  out.push('|---|---|---|')
  for (const [name, pass, measured] of verdicts) out.push(`| ${name} | ${pass === null ? 'n/a' : pass ? 'PASS' : 'MISS'} | ${measured} |`)
  out.push('')
  out.push(`Whole run: ${(elapsed / 1000).toFixed(0)} s.`)
  console.log(out.join('\n'))
}

// ---------------------------------------------------------------------------------------------
// Main

async function main() {
  const begun = performance.now()
  log(`bench: ${DURATION} s runs, ${WARMUP} s warm-up, ${CONNECTIONS} connections; ${PIN ? 'pinning with taskset (server: core 1, load: core 0)' : 'taskset missing or a single core: no pinning'}`)
  if (!PIN) log('bench: figures without pinning mix the server and the load generator on the same cores')

  let raw: Row | undefined
  if (wanted('a')) {
    const answer = await captureSearchAnswer()
    log(`- captured a plan-search answer (${readFileSync(answer).length} bytes) for the raw server`)
    raw = await measure({ key: 'a', label: 'raw Bun.serve ceiling', server: 'bench/raw-server.ts', mode: 'search' },
      [BUN, join(import.meta.dir, 'raw-server.ts')], { BENCH_BODY_FILE: answer })
    rows.push(raw)
    rows.push(await measure({ key: 'a2', label: 'raw Bun.serve + counting each request in SQLite', server: 'bench/raw-counted-server.ts', mode: 'search' },
      [BUN, join(import.meta.dir, 'raw-counted-server.ts')], { BENCH_BODY_FILE: answer }))
  }
  const source = args.src ? `bun ${args.src}` : 'bun src'
  if (wanted('b')) rows.push(await measure({ key: 'b', label: 'plan search', server: source, mode: 'search' }, SANDBOX_BUN, {}, true))
  if (wanted('c')) rows.push(await measure({ key: 'c', label: 'policy issue', server: source, mode: 'issue' }, SANDBOX_BUN, {}, true))
  if (wanted('d')) rows.push(await measure({ key: 'd', label: 'modify (extend/shorten)', server: source, mode: 'modify' }, SANDBOX_BUN, {}, true))
  if (wanted('e')) rows.push(await measure({ key: 'e', label: '429 path (limit 30, one network)', server: source, mode: 'limited' }, SANDBOX_BUN, { SANDBOX_RATE_LIMIT: '30' }))
  for (const [key, name] of wanted('f') ? ([['f1', 'binary'], ['f2', 'deno'], ['f3', 'node']] as const) : []) {
    const target = TARGETS[name]
    const row: Row = { key, label: 'plan search', server: name === 'binary' ? 'binary' : name === 'deno' ? 'deno bundle' : 'node bundle', mode: 'search' }
    if (!existsSync(join(ROOT, target.artefact))) {
      row.skipped = 'not built (npm run build)'
      rows.push(row)
      continue
    }
    try {
      rows.push(await measure(row, target.command))
    } catch (error) {
      row.skipped = `failed: ${String(error).split('\n')[0]}`
      rows.push(row)
      log(String(error))
    }
  }

  const workers = wanted('workers') ? await multiProcess() : null

  let scale: ScaleResult | null = null
  if (!args.quick && wanted('scale')) {
    log('- scale figures')
    scale = await runScale({
      sessions: SESSIONS,
      serverCommand: SANDBOX_BUN,
      log: (line) => log(`  ${line}`),
      startSandbox: ({ name, command, env, pin }) => startServer({ name, command, env, pin }),
      scratch: existsSync('/dev/shm') ? '/dev/shm' : WORK,
      dir: WORK,
    })
  }
  console.log('')
  printTables(raw, scale, workers, performance.now() - begun)
}

try {
  await main()
} catch (error) {
  console.error(`bench: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  cleanup()
  process.exit(1)
}
cleanup()
