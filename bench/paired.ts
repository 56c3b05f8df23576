/**
 * @module What one checkout costs against another, on a machine too noisy for two runs in a row:
 *
 *   bun bench/paired.ts DIR_A DIR_B [--mode search|issue|modify] [--rounds 6] [--seconds 10] [--tmpfs]
 *
 * Both sandboxes run at once on core 1 (`bun DIR/src/runtime/bun/server.ts`, each with a fresh
 * database), each loaded by its own wrk on core 0 at the same time, so whatever else slows the
 * machine slows both. Two figures per round, B's over A's: the rate (under 1: B costs more), and the
 * processor time per request of each server, all its threads (over 1: B costs more), which does not
 * depend on how the kernel shared the core between them. Which side starts first alternates, so an
 * advantage of starting first cancels over an even number of rounds. Two copies of one checkout
 * gave 0.991–1.006 (rate) and 0.997–1.009 (time per request) for plan search, where runs one after
 * the other differed by 20% (bench/findings.md, 2026-11-27). Writes share the disk as well: for issue and modify, `--tmpfs`
 * puts both databases in /dev/shm, to compare what they cost the processor.
 */
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { type Mode, unexpected, WRK, type WrkResult, wrk } from './load'
import { BUN, openHarness, PIN, type Server } from './processes'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mode: { type: 'string', default: 'search' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '10' },
    tmpfs: { type: 'boolean', default: false },
  },
})
const [dirA, dirB] = positionals.map((dir) => resolve(dir))
const mode = values.mode as Mode
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
if (!dirA || !dirB || !['search', 'issue', 'modify'].includes(mode) || !Number.isInteger(rounds) || rounds < 1 || !(seconds >= 1)) {
  console.error('usage: bun bench/paired.ts DIR_A DIR_B [--mode search|issue|modify] [--rounds 6] [--seconds 10] [--tmpfs]')
  process.exit(2)
}
if (!WRK || !PIN) {
  console.error('bench/paired.ts needs wrk and taskset, and two cores')
  process.exit(2)
}

const harness = openHarness()
/** The middle value; of an even count, the mean of the two middle ones. */
function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b)
  const middle = sorted.length / 2
  return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!
}

const SIDES = ['A', 'B'] as const

function start(side: 0 | 1, index: number): Promise<Server> {
  const name = `r${index}-${SIDES[side]}`
  const env: Record<string, string> = values.tmpfs ? { SANDBOX_DB_PATH: join(harness.scratchDir('/dev/shm'), `${name}.db`) } : {}
  return harness.startServer({ name, command: [BUN, join([dirA, dirB][side]!, 'src/runtime/bun/server.ts')], env })
}

/** Both servers under load at once, each side's result and processor µs per request. */
async function load(servers: Server[], order: (0 | 1)[], time: number): Promise<{ result: WrkResult; cpuUs: number }[]> {
  const before = servers.map((server) => server.cpu())
  const results: WrkResult[] = []
  await Promise.all(order.map(async (side) => (results[side] = await wrk(harness, servers[side]!.url, mode, time, { connections: 16 }))))
  return results.map((result, side) => ({ result, cpuUs: ((servers[side]!.cpu() - before[side]!) * 1e6) / result.requests }))
}

async function round(index: number): Promise<{ rate: number; cpu: number }> {
  const order: (0 | 1)[] = index % 2 === 1 ? [0, 1] : [1, 0]
  const servers: Server[] = []
  try {
    for (const side of order) servers[side] = await start(side, index)
    await load(servers, order, 2) // warm-up: both JITs, both first sessions
    const [a, b] = await load(servers, order, seconds)
    for (const [side, { result }] of [a!, b!].entries()) {
      const failed = unexpected(mode, result)
      if (failed > 0) throw new Error(`round ${index}: ${SIDES[side]} had ${failed} failed answers (not 2xx, a socket error or a timeout)`)
    }
    const ratio = { rate: b!.result.rps / a!.result.rps, cpu: b!.cpuUs / a!.cpuUs }
    console.log(
      `round ${index} (${SIDES[order[0]!]} first): A ${a!.result.rps.toFixed(0)} req/s, ${a!.cpuUs.toFixed(0)} µs each; ` +
        `B ${b!.result.rps.toFixed(0)} req/s, ${b!.cpuUs.toFixed(0)} µs each; B/A rate ${ratio.rate.toFixed(3)}, µs ${ratio.cpu.toFixed(3)}`,
    )
    return ratio
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

console.log(`${mode}, ${rounds} rounds of ${seconds} s${values.tmpfs ? ', databases in /dev/shm' : ''}\nA ${dirA}\nB ${dirB}`)
const ratios: { rate: number; cpu: number }[] = []
for (let index = 1; index <= rounds; index++) ratios.push(await round(index))
for (const key of ['rate', 'cpu'] as const) {
  const all = ratios.map((ratio) => ratio[key])
  console.log(
    `B/A ${key === 'rate' ? 'rate' : 'µs per request'}: median ${median(all).toFixed(3)} (${Math.min(...all).toFixed(3)}–${Math.max(...all).toFixed(3)})`,
  )
}
harness.cleanup()
