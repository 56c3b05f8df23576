/**
 * @module µs per request of each path, in-process: the sandbox app (`createApp`) answering through
 * `app.handle` on an embedded file, with no socket and no load generator. Beside bench/run.ts's
 * wrk rows, which move by ±30% between runs on a shared 2-core VM, this compares two checkouts'
 * handlers, storage and commits within a few percent: each figure is the best of several rounds.
 *
 *   bun bench/in-process.ts [--rounds 7] [--requests 2000] [--only issue] [--src DIR]
 *
 *   --only TEXT  the paths whose name holds TEXT (search, issue, modify, 429)
 *   --src DIR  measure another checkout's src/ (compare a branch); TMPDIR=/dev/shm puts the file on tmpfs
 */
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { day, inProcessSandbox, travellers, trip } from './in-process-app'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    requests: { type: 'string', default: '2000' },
    src: { type: 'string' },
    only: { type: 'string', default: '' },
  },
})
const ROUNDS = Number(values.rounds)
const REQUESTS = Number(values.requests)
const SRC = resolve(values.src ?? join(import.meta.dir, '..'), 'src')

/** One app on a fresh file; `limit` as SANDBOX_RATE_LIMIT. */
const sandbox = (limit: string) => inProcessSandbox(SRC, limit)

type Call = Awaited<ReturnType<typeof sandbox>>['call']

/** The request a path sends, given what its set-up answered; `expect` is the status each must get. */
const PATHS: Record<string, { limit: string; expect: number; setUp(call: Call): Promise<(i: number) => Promise<[string, unknown]>> }> = {
  'plan search': {
    limit: '1000000000',
    expect: 200,
    setUp: async () => async () => ['plans/search', { trip, travellers, currency: 'EUR' }],
  },
  'policy issue': {
    limit: '1000000000',
    expect: 200,
    async setUp(call) {
      const plan = (await call('plans/search', { trip, travellers, currency: 'EUR' })).body.data.plans[0].plan_id
      return async () => ['policy/new', { plan_id: plan, trip, travellers }]
    },
  },
  'modify (20 extensions per policy)': {
    limit: '1000000000',
    expect: 200,
    async setUp(call) {
      const plan = (await call('plans/search', { trip, travellers, currency: 'EUR' })).body.data.plans[0].plan_id
      const issue = async () => (await call('policy/new', { plan_id: plan, trip, travellers })).body.data.policy_ref as string
      let ref = await issue()
      return async (i) => {
        // A new policy every 20 corrections, issued before the timed call.
        if (i > 0 && i % 20 === 0) ref = await issue()
        return [`policy/${ref}/modify`, { scenario: 'extend_end_date', new_end_date: day(37 + 1 + (i % 20)) }]
      }
    },
  },
  '429 path (limit 30)': {
    limit: '30',
    expect: 429,
    async setUp(call) {
      for (let i = 0; i < 30; i++) await call('plans/search', { trip, travellers, currency: 'EUR' })
      return async () => ['plans/search', { trip, travellers, currency: 'EUR' }]
    },
  },
}

/** The best round's µs per request of one path. */
async function measure(name: string): Promise<number> {
  const path = PATHS[name]!
  let best = Infinity
  for (let round = 0; round < ROUNDS; round++) {
    const { call, close } = await sandbox(path.limit)
    const next = await path.setUp(call)
    let spent = 0
    // A quarter more first, untimed: each fresh app's handlers are compiled anew and warm up.
    const warmUp = Math.ceil(REQUESTS / 4)
    for (let i = -warmUp; i < REQUESTS; i++) {
      const [to, body] = await next(i + warmUp)
      const started = performance.now()
      const answer = await call(to, body)
      // A turn of the event loop, timed with the call: what the sandbox does after an answer has gone
      // (the request log's entry) and the write-behind's flush when due are its cost too.
      await new Promise((resolve) => setImmediate(resolve))
      if (i >= 0) spent += performance.now() - started
      if (answer.status !== path.expect) throw new Error(`${name}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`)
    }
    await close()
    best = Math.min(best, (spent / REQUESTS) * 1000)
  }
  return best
}

console.log(`| path | µs per request (best of ${ROUNDS} rounds of ${REQUESTS}) |`)
console.log('|---|---:|')
for (const name of Object.keys(PATHS).filter((path) => path.includes(values.only))) console.log(`| ${name} | ${(await measure(name)).toFixed(1)} |`)
console.log(`\n${SRC}, file in ${tmpdir()}`)
