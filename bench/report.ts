/** @module The benchmark's Markdown tables: printing only (bench/goals.ts decides PASS and MISS). */
import { verdicts, type Results } from './goals'
import { unexpected, type RateResult } from './load'
import { cpuUsPerRequest as cpuUs, type Row } from './measure'
import type { Options } from './options'
import { CORES, PIN } from './processes'
import { attributionTable } from './stalls'

const ms = (us: number) => (us / 1000).toFixed(2)
const fmt = (value: number | null | undefined, digits = 0) => (value === null || value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits))
const percent = (share: number) => `${(share * 100).toFixed(share < 0.1 ? 1 : 0)}%`

/** Server CPU microseconds per request: what the layers cost, whether or not the server was the bottleneck. */

/** `stolen`: the share of the machine's CPU time the hypervisor took during the run (NaN where unknown). */
function header(options: Options, load: { start: string; end: string; stolen: number }): string[] {
  return [
    `## Benchmark (${new Date().toISOString().slice(0, 16)}Z, ${process.platform}/${process.arch}, ${CORES} cores, bun ${Bun.version})`,
    '',
    `Load: ${options.connections} connections (wrk -t ${options.connections} -c ${options.connections}), ${options.duration} s each after ${options.warmup} s warm-up; ` +
      `${PIN ? 'server pinned to core 1, load generator to core 0 (taskset)' : 'no pinning (taskset missing or 1 core)'}. ` +
      'Each connection is one partner: its own session cookie and X-Forwarded-For network. ' +
      `Load average at start ${load.start}, at end ${load.end}` +
      (Number.isNaN(load.stolen) ? '' : `; the hypervisor took ${percent(load.stolen)} of the machine's CPU time during the run (steal)`) +
      ': figures are NOISY when other work runs on the machine.',
  ]
}

function ladderTable(ladder: Row[]): string[] {
  const raw = ladder[0]?.result
  const out = [
    '',
    '### Cost ladder (plan search load; each rung adds one layer to the one above)',
    '',
    '| # | layer | req/s | vs raw | µs CPU / request | + µs over the rung above | p99 ms | server CPU | wrk CPU |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ]
  ladder.forEach((row, index) => {
    if (!row.result) return out.push(`| ${row.key} | ${row.label} | ${row.skipped ?? 'failed'} | | | | | | |`)
    const previous = index > 0 ? cpuUs(ladder[index - 1]!) : NaN
    const bad = unexpected(row.mode, row.result)
    out.push(
      `| ${row.key} | ${row.label} | ${row.result.rps.toFixed(0)}${bad ? ` (${bad} errors ⚠)` : ''} | ${raw ? percent(row.result.rps / raw.rps) : 'n/a'} | ` +
        `${fmt(cpuUs(row))} | ${index === 0 ? '' : fmt(cpuUs(row) - previous)} | ${ms(row.result.p99_us)} | ${fmt((row.serverCpu ?? NaN) * 100)}% | ` +
        `${fmt(row.result.wrkCpu * 100)}%${row.result.wrkCpu >= 0.9 ? ' ⚑' : ''} |`,
    )
  })
  out.push(
    '',
    '"µs CPU / request": the server\'s CPU time per answered request; "+ µs": what that rung\'s layer adds. ' +
      '"wrk CPU" ⚑ (90% or more): the load generator, not the server, was the limit, so that row\'s req/s is a lower bound ' +
      '(for L0: the true ceiling is higher and every "vs raw" is flattering).',
  )
  return out
}

function pathsTable(paths: Row[], raw: Row | undefined): string[] {
  if (paths.length === 0) return []
  const out = [
    '',
    '### Other paths and deploy targets',
    '',
    '| # | scenario | server | req/s | p50 ms | p99 ms | non-2xx | peak RSS MB | vs raw | µs CPU / request | server CPU | wrk CPU |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const row of paths) {
    const r = row.result
    if (!r) {
      out.push(`| ${row.key} | ${row.label} | ${row.server} | ${row.skipped ?? 'failed'} | | | | | | | | |`)
      continue
    }
    const bad = unexpected(row.mode, r)
    const non2xx = row.mode === 'limited' ? `${r.n429} (429)${bad ? `, ${bad} other ⚠` : ''}` : bad ? `${bad} ⚠` : '0'
    out.push(
      `| ${row.key} | ${row.label} | ${row.server} | ${r.rps.toFixed(0)} | ${ms(r.p50_us)} | ${ms(r.p99_us)} | ${non2xx} | ${fmt(row.peakRssMb, 1)} | ` +
        `${raw?.result ? percent(r.rps / raw.result.rps) : 'n/a'} | ${fmt(cpuUs(row))} | ${fmt((row.serverCpu ?? NaN) * 100)}% | ${fmt(r.wrkCpu * 100)}%${r.wrkCpu >= 0.9 ? ' ⚑' : ''} |`,
    )
  }
  return out
}

/** A row as the latency tables name it: the ladder's top rung is the sandbox's plan search. */
const rowName = (row: Row) => (row.key === 'L7' ? 'plan search' : row.label)

const rateLine = (key: string, name: string, h: RateResult) =>
  `| ${key} | ${name} | ${h.target_rate} | ${h.achieved_rate} | ${h.p50_ms.toFixed(2)} | ` +
  `${h.p99_ms.toFixed(2)} | ${h.max_ms.toFixed(2)} | ${h.non2xx}${h.non2xx ? ' ⚠' : ''} | ${Math.round(h.server_cpu * 100)}% | ${h.server_cpu_us_per_request} |`

function halfRateTable(rows: Row[], options: Options): string[] {
  const halves = rows.filter((row) => row.half)
  if (halves.length === 0) return []
  const out = [
    '',
    `### Latency at half the measured maximum, c400 at a fixed 400 req/s (open loop, constant rate, 8 keep-alive connections, one write per request, ${options.duration} s, latency from the scheduled send time)`,
    '',
    '| # | scenario | target req/s | achieved req/s | p50 ms | p99 ms | max ms | non-2xx | server CPU | µs CPU / request |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ]
  for (const row of halves) {
    const h = row.half!
    out.push(rateLine(row.key, `${rowName(row)} (${row.server})`, h))
    if (row.floor) out.push(rateLine(`${row.key} floor`, 'raw Bun.serve at the same rate', row.floor))
  }
  out.push(
    '',
    '"floor": right after its row, the same client at the same rate against raw Bun.serve answering a fixed plan-search answer (bench/floor.ts): what the client and the machine add to p99 with next to no server work. ' +
      '"server CPU": the server\'s share of one core while the clock ran (set-up left out); compare its "µs CPU / request" with ' +
      "the same path's under wrk above: where it is higher, half the maximum rate is more than half the server (bench/findings.md).",
  )
  return out
}

/** What each constant-rate row's requests waited behind (bench/stalls.ts). */
function stallTables(rows: Row[]): string[] {
  const traced = rows.filter((row) => row.stalls)
  if (traced.length === 0) return []
  return [
    '',
    '### What the constant-rate requests waited behind',
    '',
    'The server traced its event loop (every lateness of 2 ms or more: a stall) and timed its housekeeping (src/stall-trace.ts); ' +
      'on Bun, JavaScriptCore logged each collection. Each stall is put down to the timed work that overlapped it most, ' +
      'and each request of 5 ms or more to the stall (or the wait for the write lock) that overlapped it most (bench/stalls.ts). ' +
      'The client lists the times its own loop woke 2 ms or more late: a request that overlapped one of those most (not during or just after a server stall) was held back by the load generator, not the server. ' +
      "On Linux the trace also says, for each stall, how long the loop's thread ran and how long it waited for the core: " +
      'a stall it spent mostly waiting is put down to the other threads or processes that had the core. ' +
      "Work on the checkpoint thread runs beside the loop: it is a cause only where the loop's thread did not run and nothing on the loop overlapped.",
    ...traced.flatMap((row) => ['', attributionTable(`${row.key} ${rowName(row)} (${row.server}) at ${row.half!.target_rate} req/s`, row.stalls!)]),
  ]
}

function scaleTable(results: Results): string[] {
  const { scale } = results
  if (!scale) return []
  return [
    '',
    `### Scale (${scale.sessions.toLocaleString('en')} sessions, each with a plan search and an issued policy, ` +
      `seeded in-process in ${scale.seedSeconds.toFixed(0)} s with a fake clock; not through HTTP)`,
    '',
    '| figure | value |',
    '|---|---:|',
    `| server RSS on that database after 200 requests (VmRSS / VmHWM) | ${fmt(scale.rssMb * 1.048576, 1)} / ${fmt(scale.hwmMb * 1.048576, 1)} MB |`,
    `| database file / -wal | ${fmt(scale.dbMb, 1)} / ${fmt(scale.walMb, 1)} MiB |`,
    `| expiry sweep of ${fmt(scale.sweepPurged)} expired sessions (server log duration_ms) | ${fmt(scale.sweepMs)} ms |`,
    `| probe plan searches, back to back, that overlapped the sweep: count / p99 / worst / how many ≥ 50 ms (${scale.sweepProbeNon2xx} non-2xx) | ` +
      `${scale.sweepOverlapping} / ${fmt(scale.sweepP99Ms, 1)} ms / ${fmt(scale.sweepWorstMs, 1)} ms / ${scale.sweepOver50} |`,
    `| binary cold start to first answer (${scale.coldStartRuns} runs): p50 / best | ${fmt(scale.coldStartP50Ms)} / ${fmt(scale.coldStartBestMs)} ms |`,
  ]
}

function postgresTable(results: Results, options: Options): string[] {
  if (!results.postgres) return []
  return [
    '',
    `### PostgreSQL (embedded server on this machine; no pinning: PostgreSQL, the instances and wrk share ${CORES} cores; ${options.connections} connections in all)`,
    '',
    '| instances | scenario | req/s | p99 ms (worst instance) | non-2xx | transactions / request | statements / request | round trips / request (one client, in turn) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|',
    ...results.postgres.map(
      (row) =>
        `| ${row.instances} | ${row.label} | ${row.rps.toFixed(0)} | ${row.p99Ms.toFixed(2)} | ${row.unexpected} | ` +
        `${row.transactionsPerRequest.toFixed(2)} | ${row.statementsPerRequest.toFixed(2)} | ${row.roundTripsPerRequest?.toFixed(2) ?? ''} |`,
    ),
    '',
    'A statement is one query cycle (ReadyForQuery); a round trip is one wait, however many statements were sent together.',
  ]
}

function targetsTable(results: Results): string[] {
  return [
    '',
    '### Targets',
    '',
    '| target | result | measured |',
    '|---|---|---|',
    ...verdicts(results).map(({ target, pass, measured }) => `| ${target} | ${pass === null ? 'n/a' : pass ? 'PASS' : 'MISS'} | ${measured} |`),
  ]
}

export function report(results: Results, options: Options, load: { start: string; end: string; stolen: number }, elapsedMs: number): string {
  return [
    ...header(options, load),
    ...ladderTable(results.ladder),
    ...pathsTable(results.paths, results.ladder[0]),
    ...halfRateTable([...results.ladder, ...results.paths], options),
    ...stallTables([...results.ladder, ...results.paths]),
    ...scaleTable(results),
    ...postgresTable(results, options),
    ...targetsTable(results),
    '',
    `Whole run: ${(elapsedMs / 1000).toFixed(0)} s.`,
  ].join('\n')
}
