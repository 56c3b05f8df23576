/**
 * @module Row g: what a hostile 16 KiB body costs next to a normal one of the same size (issue #12:
 * an unanchored e-mail pattern made one 16 KiB value without spaces cost ≈ 35× a normal body).
 * Median latency of sequential requests, the shapes interleaved so that both see the same machine.
 */
import { DATES } from './load'
import type { Bench } from './measure'

export interface BodyCost {
  normalMs: number
  worst: { shape: string; ms: number }
}

function shapes(): Record<string, string> {
  const search = { trip: { origin_country: 'IN', destination_country: 'FR', start_date: DATES.start, end_date: DATES.end }, travellers: [{ age: 34 }] }
  const base = JSON.stringify(search)
  const size = 16 * 1024 - base.length - 12
  return {
    'normal (valid search, whitespace-padded)': base.replace('{', `{${' '.repeat(size + 11)}`),
    'value without spaces or @': JSON.stringify({ ...search, note: 'a'.repeat(size) }),
    'value a…@b… without a dot': JSON.stringify({ ...search, note: `${'a'.repeat(size / 2)}@${'b'.repeat(size / 2 - 1)}` }),
    'key without spaces or @': JSON.stringify({ ...search, ['a'.repeat(size)]: 1 }),
  }
}

export async function bodyCost(bench: Bench, sandbox: string[]): Promise<BodyCost> {
  bench.log('- g: hostile 16 KiB bodies against a normal one')
  const server = await bench.harness.startServer({ name: 'g', command: sandbox })
  const bodies = shapes()
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(bodies).map((shape) => [shape, []]))
  try {
    for (let round = 0; round < 300; round++) {
      for (const [shape, body] of Object.entries(bodies)) {
        const started = performance.now()
        const response = await fetch(`${server.url}/api/sandbox/plans/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.250.${round & 255}.1` },
          body,
        })
        await response.arrayBuffer()
        if (round > 20) times[shape]!.push(performance.now() - started)
      }
    }
  } finally {
    await server.stop()
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const [normal, ...hostile] = Object.entries(times).map(([shape, values]) => ({ shape, ms: median(values) }))
  for (const { shape, ms } of [normal!, ...hostile]) bench.log(`  ${shape}: median ${ms.toFixed(2)} ms`)
  return { normalMs: normal!.ms, worst: hostile.reduce((a, b) => (b.ms > a.ms ? b : a)) }
}
