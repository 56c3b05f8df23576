/**
 * @module What one checkout costs against another, on a machine too noisy for two runs in a row:
 *
 *   bun bench/paired.ts DIR_A DIR_B [--mode search|issue|modify] [--rounds 5] [--seconds 10] [--tmpfs]
 *
 * Both sandboxes run at once on core 1 (`bun DIR/src/runtime/bun/server.ts`, each with a fresh
 * database), each loaded by its own wrk on core 0 at the same time. The kernel shares the core
 * between them, so whatever else slows the machine slows both, and B's rate over A's is the ratio of
 * their costs per request: two copies of one checkout gave 1.003–1.010 where runs one after the
 * other differed by 20% (bench/findings.md, 2026-11-27). A ratio under 1 means B costs more.
 * Writes share the disk as well, and whichever sandbox waits for it loses: for issue and modify,
 * `--tmpfs` puts both databases in /dev/shm, to compare what they cost the processor.
 */
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { type Mode, WRK, wrk } from './load'
import { BUN, openHarness, PIN } from './processes'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { mode: { type: 'string', default: 'search' }, rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '10' }, tmpfs: { type: 'boolean', default: false } },
})
const [dirA, dirB] = positionals.map((dir) => resolve(dir))
const mode = values.mode as Mode
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
if (!dirA || !dirB || !['search', 'issue', 'modify'].includes(mode) || !(rounds >= 1) || !(seconds >= 1)) {
  console.error('usage: bun bench/paired.ts DIR_A DIR_B [--mode search|issue|modify] [--rounds 5] [--seconds 10] [--tmpfs]')
  process.exit(2)
}
if (!WRK || !PIN) {
  console.error('bench/paired.ts needs wrk and taskset, and two cores')
  process.exit(2)
}

const harness = openHarness()
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!

async function round(index: number): Promise<number> {
  const servers = await Promise.all(
    [dirA, dirB].map((dir, side) => {
      const name = `r${index}-${'ab'[side]}`
      const env: Record<string, string> = values.tmpfs ? { SANDBOX_DB_PATH: join(harness.scratchDir('/dev/shm'), `${name}.db`) } : {}
      return harness.startServer({ name, command: [BUN, join(dir!, 'src/runtime/bun/server.ts')], env })
    }),
  )
  try {
    const load = (time: number) => Promise.all(servers.map((server) => wrk(harness, server.url, mode, time, { connections: 16 })))
    await load(2) // warm-up: both JITs, both first sessions
    const [a, b] = await load(seconds)
    const ratio = b!.rps / a!.rps
    console.log(`round ${index}: A ${a!.rps.toFixed(0)} req/s, B ${b!.rps.toFixed(0)} req/s, B/A ${ratio.toFixed(3)}`)
    return ratio
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

console.log(`${mode}, ${rounds} rounds of ${seconds} s${values.tmpfs ? ', databases in /dev/shm' : ''}\nA ${dirA}\nB ${dirB}`)
const ratios: number[] = []
for (let index = 1; index <= rounds; index++) ratios.push(await round(index))
console.log(`B/A median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`)
harness.cleanup()
