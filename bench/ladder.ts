/**
 * @module The cost ladder: the same load (plan search, one partner per connection) against a stack
 * built up one layer at a time, from a bare `Bun.serve` to the sandbox itself, so that each row's
 * extra microseconds are what its layer costs (bench/ladder-server.ts builds the middle rungs from
 * the sandbox's own modules).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { withFloor } from './floor'
import { DATES } from './load'
import { measure, searchAnswerFile, type Bench, type Row } from './measure'
import { BUN } from './processes'
import type { Rung } from './ladder-server'

/** What each rung adds to the one before it, in order. */
export const LADDER: { key: string; rung: Rung | 'raw' | 'sandbox'; adds: string }[] = [
  { key: 'L0', rung: 'raw', adds: 'raw Bun.serve, fixed answer of the same size (ceiling)' },
  { key: 'L1', rung: 'elysia', adds: 'bare Elysia route (app settings), answer serialised' },
  { key: 'L2', rung: 'hooks', adds: '+ our hooks (request start, error answer, log line)' },
  { key: 'L3', rung: 'lookup', adds: '+ admission and testing aids, storage read only (no write)' },
  { key: 'L4', rung: 'admission', adds: '+ admission: session lookup, rate check and count (memory, written behind)' },
  { key: 'L5', rung: 'body', adds: '+ body reader (size, media type, JSON, personal data) and body schema' },
  { key: 'L6', rung: 'handler', adds: '+ handler (pricing, quotes recorded) and success envelope' },
  { key: 'L7', rung: 'sandbox', adds: '+ answer schema check and log line = the sandbox (src/runtime/bun/server.ts)' },
]

/** One real plan-search answer, for the lower rungs to send back. */
async function captureSearchAnswer(bench: Bench, sandbox: string[]): Promise<string> {
  const server = await bench.harness.startServer({ name: 'capture', command: sandbox })
  try {
    const response = await fetch(`${server.url}/api/sandbox/plans/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.0.1' },
      body: JSON.stringify({
        trip: { origin_country: 'IN', destination_country: 'FR', start_date: DATES.start, end_date: DATES.end },
        travellers: [{ age: 34 }, { age: 8 }],
        currency: 'EUR',
      }),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`capture search answered ${response.status}: ${text}`)
    const file = searchAnswerFile(bench)
    writeFileSync(file, text)
    return file
  } finally {
    await server.stop()
  }
}

/** Every rung measured in turn; the last is the sandbox's plan search, also at half its rate. */
export async function runLadder(bench: Bench, sandbox: string[], sandboxLabel: string): Promise<Row[]> {
  const answer = await captureSearchAnswer(bench, sandbox)
  const rows: Row[] = []
  for (const { key, rung, adds } of LADDER) {
    const row: Row = {
      key,
      label: adds,
      server: rung === 'sandbox' ? sandboxLabel : rung === 'raw' ? 'bench/raw-server.ts' : `ladder-server ${rung}`,
      mode: 'search',
    }
    const command = rung === 'sandbox' ? sandbox : [BUN, join(import.meta.dir, rung === 'raw' ? 'raw-server.ts' : 'ladder-server.ts')]
    const measured = await measure(bench, row, command, { BENCH_BODY_FILE: answer, BENCH_RUNG: rung }, rung === 'sandbox' ? 'half' : undefined)
    rows.push(rung === 'sandbox' ? await withFloor(bench, measured) : measured)
  }
  return rows
}
