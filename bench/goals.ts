/**
 * @module The benchmark's targets (issue 13, shares as issue 21 set them) and their verdicts: PASS, MISS, or n/a when the part
 * did not run. Deciding lives here; bench/report.ts only prints. A missed throughput target names
 * the ladder rung that blocks it: the first layer at which plan search already falls under the share.
 */
import type { BodyCost } from './bodies'
import { unexpected } from './load'
import { cpuUsPerRequest, type Row } from './measure'
import type { PostgresRow } from './postgres'
import type { ScaleResult } from './scale'

export interface Results {
  ladder: Row[]
  paths: Row[]
  scale: ScaleResult | null
  bodies: BodyCost | null
  postgres: PostgresRow[] | null
}

export interface Verdict {
  target: string
  pass: boolean | null
  measured: string
}

/** Share of the raw ceiling each path must reach (same run). */
const THROUGHPUT = [
  { key: 'L7', name: 'plan search', share: 0.2 },
  { key: 'c', name: 'policy issue', share: 0.1 },
  { key: 'd', name: 'modify', share: 0.1 },
  { key: 'e', name: '429 path', share: 0.5 },
]
/** Issue 36: at half the max rate, p99 at most this far above the floor's, and no request over `WORST_MS`. */
const OVER_FLOOR_MS = 5
const WORST_MS = 50
/** Issue 36: the issue row at a fixed 400 req/s. */
const FIXED_P99_MS = 5
/** The half-rate rows with a target: plan search, issue and modify, on `bun run` and the binary. */
const HALF_RATE = [
  { key: 'L7', name: 'plan search' },
  { key: 'c', name: 'policy issue' },
  { key: 'd', name: 'modify' },
  { key: 'f1', name: 'plan search, binary' },
  { key: 'f1c', name: 'policy issue, binary' },
  { key: 'f1d', name: 'modify, binary' },
]
const SWEEP_WORST_MS = 50

export const rowOf = (results: Results, key: string) => [...results.ladder, ...results.paths].find((row) => row.key === key)

/** The first rung (above raw) whose req/s is already under `share` of raw: no layer above can win it back. */
export function blockingRung(ladder: Row[], share: number): Row | undefined {
  const raw = ladder[0]?.result
  return raw && ladder.slice(1).find((row) => row.result && row.result.rps < share * raw.rps)
}

/**
 * Where a missed share is lost: a ladder rung, or (no rung under it) the path's own handler and
 * writes, told apart by the same path with its database on tmpfs (rows c0, d0) where it ran.
 */
function blocker(results: Results, goal: (typeof THROUGHPUT)[number]): string {
  const rung = blockingRung(results.ladder, goal.share)
  if (rung) return `blocked at ${rung.key}: ${rung.label}`
  const lost = `every search rung stays above ${goal.share * 100}%: lost in this path's own handler and writes (above L5)`
  const onTmpfs = rowOf(results, `${goal.key}0`)
  const raw = results.ladder[0]?.result
  if (!onTmpfs?.result || !raw) return lost
  const share = onTmpfs.result.rps / raw.rps
  const errors = unexpected(onTmpfs.mode, onTmpfs.result) === 0 ? '' : ' (with errors)'
  return (
    `${lost}; with its database on tmpfs ${(share * 100).toFixed(1)}%${errors} (${goal.key}0)` +
    (share < goal.share ? ', so it misses without the disk too' : ', so the disk is what it misses by')
  )
}

function throughput(results: Results, goal: (typeof THROUGHPUT)[number]): Verdict {
  const target = `${goal.name} ≥ ${goal.share * 100}% of raw`
  const row = rowOf(results, goal.key)
  const raw = results.ladder[0]?.result
  if (!row?.result || !raw) return { target, pass: null, measured: 'not measured' }
  const ratio = row.result.rps / raw.rps
  const clean = unexpected(row.mode, row.result) === 0
  return {
    target,
    pass: ratio >= goal.share && clean,
    measured: `${(ratio * 100).toFixed(1)}%${clean ? '' : ' (with errors)'}${ratio < goal.share ? `; ${blocker(results, goal)}` : ''}`,
  }
}

/** What most of a row's slow requests waited behind (bench/stalls.ts), for a missed target. */
function mostlyBehind(row: Row): string {
  const causes = [...(row.stalls?.sources.entries() ?? [])].filter(([, source]) => source.slow > 0).sort(([, a], [, b]) => b.slow - a.slow)
  if (causes.length === 0) return ''
  const [name, source] = causes[0]!
  return `; ${row.stalls!.slowRequests} requests ≥ 5 ms, ${source.slow} of them behind ${name}`
}

/**
 * At half the max rate: p99 within `OVER_FLOOR_MS` of raw Bun.serve's at the same rate, and no
 * request over `WORST_MS`. A miss says how busy the server was and what the slow requests waited behind.
 */
function halfRate(results: Results, key: string, name: string): Verdict {
  const row = rowOf(results, key)
  const target = `${name}: p99 within ${OVER_FLOOR_MS} ms of the floor at half the max rate, none over ${WORST_MS} ms`
  if (!row?.half || !row.floor) return { target, pass: null, measured: 'not measured' }
  const { half, floor } = row
  const pass = half.p99_ms <= floor.p99_ms + OVER_FLOOR_MS && half.max_ms <= WORST_MS && half.non2xx === 0
  const busy = `; the server ${Math.round(half.server_cpu * 100)}% busy at ${half.server_cpu_us_per_request} µs CPU / request (${Math.round(cpuUsPerRequest(row))} under wrk)`
  return {
    target,
    pass,
    measured:
      `p99 ${half.p99_ms.toFixed(2)} ms (floor ${floor.p99_ms.toFixed(2)}), max ${half.max_ms.toFixed(2)} ms at ${half.target_rate} req/s` +
      (pass ? '' : `${half.server_cpu > 0 ? busy : ''}${mostlyBehind(row)}`),
  }
}

function fixedRate(results: Results): Verdict {
  const row = rowOf(results, 'c400')
  const target = `policy issue at 400 req/s: p99 < ${FIXED_P99_MS} ms`
  if (!row?.half) return { target, pass: null, measured: 'not measured' }
  const { half } = row
  const pass = half.p99_ms < FIXED_P99_MS && half.non2xx === 0
  const floor = row.floor ? ` (floor ${row.floor.p99_ms.toFixed(2)})` : ''
  return { target, pass, measured: `p99 ${half.p99_ms.toFixed(2)} ms${floor}, max ${half.max_ms.toFixed(2)} ms${pass ? '' : mostlyBehind(row)}` }
}

function scaleVerdicts(scale: ScaleResult): Verdict[] {
  const rssMb = Math.max(scale.rssMb, scale.hwmMb) * 1.048576
  return [
    { target: `RSS < 150 MB after ${scale.sessions.toLocaleString('en')} sessions (peak)`, pass: rssMb < 150, measured: `${rssMb.toFixed(1)} MB` },
    {
      target: `no request > ${SWEEP_WORST_MS} ms during a ${scale.sessions.toLocaleString('en')}-session sweep`,
      pass: scale.sweepWorstMs === null ? null : scale.sweepWorstMs < SWEEP_WORST_MS && scale.sweepProbeNon2xx === 0,
      measured: scale.sweepWorstMs === null ? 'no sweep seen' : `${scale.sweepWorstMs.toFixed(1)} ms worst (${scale.sweepOver50} ≥ 50 ms)`,
    },
    {
      target: 'binary cold start < 150 ms (p50)',
      pass: scale.coldStartP50Ms === null ? null : scale.coldStartP50Ms < 150,
      measured: scale.coldStartP50Ms === null ? 'binary not built' : `${scale.coldStartP50Ms.toFixed(0)} ms`,
    },
  ]
}

export function verdicts(results: Results): Verdict[] {
  const out = THROUGHPUT.map((goal) => throughput(results, goal))
  out.push(...HALF_RATE.map((goal) => halfRate(results, goal.key, goal.name)), fixedRate(results))
  if (results.scale) out.push(...scaleVerdicts(results.scale))
  if (results.bodies) {
    const { worst, normalMs } = results.bodies
    const ratio = worst.ms / normalMs
    out.push({
      target: 'g: worst 16 KiB body within 2× of a normal one (median, sequential)',
      pass: ratio <= 2,
      measured: `${worst.ms.toFixed(2)} ms (${worst.shape}) vs ${normalMs.toFixed(2)} ms: ${ratio.toFixed(2)}×`,
    })
  }

  if (results.postgres) {
    const bad = results.postgres.reduce((sum, row) => sum + row.unexpected, 0)
    out.push({ target: 'PostgreSQL: every answer 2xx with one and two instances', pass: bad === 0, measured: `${bad} unexpected` })
  }
  return out
}
