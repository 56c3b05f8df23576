/**
 * @module A half-rate row's floor: right after the row, the same constant rate from the same client
 * against raw Bun.serve (bench/raw-server.ts) on the same core, answering a fixed plan-search answer
 * (an empty one when the ladder did not run). Its p99 is what the client and the machine add with next
 * to no server work, so a half-rate p99 near it says the target is at what this machine can show.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { constantRate, wrk } from './load'
import { searchAnswerFile, type Bench, type Row } from './measure'
import { BUN } from './processes'

/** The row with `floor` set when it was measured at half its rate; a failure is logged, not thrown. */
export async function withFloor(bench: Bench, row: Row): Promise<Row> {
  if (!row.half) return row
  const { harness, options, log } = bench
  const answer = searchAnswerFile(bench)
  let server
  try {
    server = await harness.startServer({
      name: `${row.key}-floor`,
      command: [BUN, join(import.meta.dir, 'raw-server.ts')],
      env: existsSync(answer) ? { BENCH_BODY_FILE: answer } : {},
    })
    if (options.warmup > 0) await wrk(harness, server.url, 'search', options.warmup, { connections: options.connections })
    // The raw server answers any request alike; plan search needs no set-up from the client.
    row.floor = await constantRate(harness, server, 'search', row.half.target_rate, options.duration, options.warmup)
    log(`  floor: raw Bun.serve at ${row.half.target_rate} req/s: p99 ${row.floor.p99_ms} ms, server CPU ${Math.round(row.floor.server_cpu * 100)}%`)
  } catch (error) {
    log(`  floor of ${row.key} not measured: ${String(error).split('\n')[0]}`)
  } finally {
    await server?.stop()
  }
  return row
}
