/**
 * @module The half-rate rows' floor: the same constant rate, from the same client, against raw
 * Bun.serve (bench/raw-server.ts) on the same core. Its p99 is what the client and the machine add
 * with next to no server work, so a half-rate p99 near it says the target is below what this machine
 * can show, not what the sandbox costs.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { searchAnswerFile } from './ladder'
import { constantRate, wrk } from './load'
import type { Bench, Row } from './measure'
import { BUN } from './processes'

/** Sets `floor` on every row measured at half its rate; one raw server serves them all. */
export async function addClientFloors(bench: Bench, rows: Row[]): Promise<void> {
  const halves = rows.filter((row) => row.half)
  if (halves.length === 0) return
  const { harness, options, log } = bench
  const answer = searchAnswerFile(bench)
  log('- client floor: raw Bun.serve at each half-rate row\'s rate')
  const server = await harness.startServer({
    name: 'floor',
    command: [BUN, join(import.meta.dir, 'raw-server.ts')],
    env: existsSync(answer) ? { BENCH_BODY_FILE: answer } : {},
  })
  try {
    if (options.warmup > 0) await wrk(harness, server.url, 'search', options.warmup, { connections: options.connections })
    for (const row of halves) {
      // The raw server answers any request alike; plan search needs no set-up from the client.
      row.floor = await constantRate(harness, server, 'search', row.half!.target_rate, options.duration)
      log(`  ${row.key} at ${row.half!.target_rate} req/s: p99 ${row.floor.p99_ms} ms, server CPU ${Math.round(row.floor.server_cpu * 100)}%`)
    }
  } finally {
    await server.stop()
  }
}
