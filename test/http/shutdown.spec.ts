/**
 * Graceful shutdown (issue #4): SIGTERM while requests are in flight lets every one of them finish
 * (each answered 200), then the process exits 0 with the WAL checkpointed into the main file (the
 * -wal file empty or gone; SQLite only). A client that never finishes its request may not hold the process
 * forever.
 *
 * "In flight" is made certain, not left to timing: each request's headers and all but the last
 * byte of its body are sent before the signal, and the last byte after it.
 */
import { randomBytes } from 'node:crypto'
import { API, call, expect, openSession, sleep, test, tripFrom } from './support/client'
import { parseResponses, portOf, rawExchange, rawHead, type RawResult } from './support/raw'
import { type RunningServer } from './support/server'
import { engine, queryStore, walSize } from './support/store'

/** The -wal is empty or gone after a clean stop (SQLite only: PostgreSQL keeps no file of ours). */
async function expectWalCheckpointed(dbPath: string) {
  if (engine() !== 'sqlite') return
  const wal = walSize(dbPath)
  expect(wal === null || wal === 0, `-wal is ${wal} bytes after a clean stop`).toBe(true)
}

const SHUTDOWN_BOUND_MS = 10_000

/**
 * As in production: some HTTP layers behave differently under CI (srvx, under the Node entry,
 * installs its own SIGTERM handler only when neither CI nor TEST is set), so the servers here run
 * without those variables.
 */
const PRODUCTION_LIKE = { CI: '', TEST: '' }

/** Resolves with the exit code, or 'running' if the process is still up after `ms`. */
const exitWithin = (server: RunningServer, ms: number) => Promise.race([server.stop('SIGTERM'), sleep(ms).then(() => 'running' as const)])

test.describe('graceful shutdown', () => {
  test('SIGTERM with requests in flight: all answered 200, exit 0, -wal empty or gone', async ({ privateServer }) => {
    test.setTimeout(40_000)
    const server = await privateServer('shutdown-inflight', { SANDBOX_RATE_LIMIT: '1000', ...PRODUCTION_LIKE })
    const {
      network,
      cookie,
      body: { trip, travellers },
      plans,
    } = await openSession(server.url, server.url, { trip: tripFrom(9, 6), travellers: [{ age: 52 }] })

    const bodies = [
      ...Array.from({ length: 6 }, (_, index) => ({ path: API.search, key: undefined, body: { trip: tripFrom(9 + index, 6), travellers } })),
      ...Array.from({ length: 6 }, (_, index) => ({
        path: API.issue,
        key: `shutdown-${index}-${randomBytes(3).toString('hex')}`,
        body: { plan_id: plans[0].plan_id, trip, travellers, partner_reference: `BK-${index}` },
      })),
    ]
    const finishers: ((piece: string) => void)[] = []
    const exchanges: Promise<RawResult>[] = bodies.map(({ path, key, body }) => {
      const text = JSON.stringify(body)
      const headers: Record<string, string | number> = {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(text),
        Cookie: `sbx_session=${cookie}`,
        'X-Forwarded-For': network,
      }
      if (key) headers['Idempotency-Key'] = key
      return rawExchange(portOf(server.url), [rawHead(path, headers), text.slice(0, -1)], {
        deadlineMs: 15_000,
        responses: 1,
        onConnect: (write) => finishers.push(() => write(text.slice(-1))),
      })
    })
    // Every request has reached the server and waits for its last byte: the server admits (and
    // counts) a call before it reads the body, so this network's count shows them all. Each look
    // is a call of its own: the session, the search, the 12, and the looks so far.
    await expect.poll(() => finishers.length, { timeout: 10_000 }).toBe(bodies.length)
    let looks = 0
    const counted = async () => {
      looks++
      const reply = await call(server.url, '/api/sandbox/policy/pol_sbx_00000000000000000000/read', { cookie, network })
      return 1000 - reply.json.meta.rate_limit.remaining - 2 - looks
    }
    await expect.poll(counted, { timeout: 10_000 }).toBe(bodies.length)

    server.process.kill('SIGTERM')
    // Let the signal land first (whether it has or not, every answer must be 200).
    await sleep(300)
    for (const finish of finishers) finish('')
    const results = await Promise.all(exchanges)
    const statuses = results.map((result) => parseResponses(result.bytes)[0]?.status ?? `no answer (${result.ended} after ${result.ms} ms)`)
    expect(statuses).toEqual(bodies.map(() => 200))
    for (const result of results) expect(JSON.parse(result.responses[0]!.text).ok).toBe(true)

    expect(await exitWithin(server, SHUTDOWN_BOUND_MS)).toBe(0)
    await expectWalCheckpointed(server.dbPath)
    // The policies answered during the shutdown are in the database.
    const issuedRefs = results.slice(6).map((result) => JSON.parse(result.responses[0]!.text).data.policy_ref as string)
    const stored = await queryStore<{ ref: string }>(server.dbPath, 'SELECT ref FROM policies')
    expect(stored.map((row) => row.ref).sort()).toEqual([...issuedRefs].sort())
  })

  test(`a client that never finishes its request cannot hold the shutdown past ${SHUTDOWN_BOUND_MS / 1000} s`, async ({ privateServer }) => {
    test.setTimeout(SHUTDOWN_BOUND_MS + 20_000)
    const server = await privateServer('shutdown-stuck', { ...PRODUCTION_LIKE })
    const stuck = rawExchange(portOf(server.url), [rawHead(API.search, { 'Content-Type': 'application/json', 'Content-Length': 100 }), '{"trip":'], {
      deadlineMs: SHUTDOWN_BOUND_MS + 5_000,
    })
    await sleep(300)
    const signalled = Date.now()
    server.process.kill('SIGTERM')
    const exit = await exitWithin(server, SHUTDOWN_BOUND_MS)
    test.info().annotations.push({ type: 'stuck client', description: `exit ${exit} after ${Date.now() - signalled} ms` })
    expect(exit, `exit code within ${SHUTDOWN_BOUND_MS} ms of SIGTERM`).toBe(0)
    await stuck
    await expectWalCheckpointed(server.dbPath)
  })
})
