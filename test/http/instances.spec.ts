/**
 * Several instances on one database (issue 10): on `pg` two Bun instances share one PostgreSQL
 * database, on `bun` two processes share one SQLite file. Each test starts its own pair (its own
 * configuration, its own fresh database) and spreads its calls over both, A, B, A, …
 *
 * - a burst of concurrent calls admits exactly the limit, per session and per network;
 * - concurrent repeats of one Idempotency-Key on both instances make one policy;
 * - a cancellation repeated on both instances cancels once;
 * - webhook deliveries are shared: each event arrives once;
 * - SIGKILL of one instance under load loses no acknowledged write;
 * - both instances sweep, and no expired session is swept twice.
 *
 * The other targets run the same code on another runtime; these run on `pg` and `bun` only.
 */
import { randomBytes } from 'node:crypto'
import { test, expect } from './support/fixtures'
import { currentTarget, preparePostgres, startServer, type RunningServer } from './support/server'
import {
  LEAK_PATTERNS, PATH, call, expectError, expectOk, removeDatabase, replyProblems, scratchDatabase, sleep, tripFrom, uniqueNetwork,
  type Reply,
} from './support/hardening'
import { countRows } from './support/store'
import { startReceiver } from './support/receiver'
import { before, withTimeSpans } from '../support/wait'

const LIMIT = 50
const CALLS = 300

test.skip(() => !['pg', 'bun'].includes(currentTarget()), 'runtime-independent: runs on pg (PostgreSQL) and bun (SQLite)')

/**
 * Two servers on one fresh database; always killed at the end. On PostgreSQL they start together
 * (each runs the migrations: they must not trip over each other); two processes on a fresh SQLite
 * file start one after the other, as on every SQLite target.
 */
async function withPair(name: string, env: Record<string, string>, work: (pair: RunningServer[], dbPath: string) => Promise<void>) {
  const dbPath = scratchDatabase(name)
  const pair: RunningServer[] = []
  const start = () => startServer({ SANDBOX_DB_PATH: dbPath, ...env }).then((server) => (pair.push(server), server))
  try {
    if (currentTarget() === 'pg') {
      await preparePostgres(dbPath)
      await Promise.all([start(), start()])
    } else {
      await start()
      await start()
    }
    await work(pair, dbPath)
  } finally {
    await Promise.all(pair.map((server) => server.stop('SIGKILL')))
    removeDatabase(dbPath)
  }
}

/** Problems with a reply that must be a 200 or a `rate_limited` 429 (no 5xx, no driver text). */
function admissionProblems(reply: Reply): string[] {
  if (reply.status === 200) {
    const leaks = LEAK_PATTERNS.filter((pattern) => pattern.test(reply.text)).map((pattern) => `200 matching ${pattern}`)
    return reply.json?.ok === true ? leaks : [`200 without ok: ${reply.text.slice(0, 200)}`, ...leaks]
  }
  const problems = replyProblems(reply, 429, 'rate_limited')
  if (!(Number(reply.headers.get('retry-after')) >= 1)) problems.push('429 without Retry-After')
  if (reply.token !== undefined) problems.push('a refused call opened a session')
  return problems
}

const searchBody = () => ({ trip: tripFrom(12, 5), travellers: [{ age: 35 }] })

test.describe('several instances on one database', () => {
  test(`${CALLS} concurrent calls over two instances admit exactly the limit (${LIMIT}) per session and per network`, async () => {
    test.setTimeout(60_000)
    await withPair('instances-limit', { SANDBOX_RATE_LIMIT: String(LIMIT) }, async (pair) => {
      const opened = await call(pair[0]!.url, PATH.session, { network: uniqueNetwork() })
      const cookie = expectOk(opened) && opened.token!
      const network = uniqueNetwork()
      // Even calls: the one session, each from a network of its own (only the session binds).
      // Odd calls: one network, no cookie (only the network binds; each admitted call opens a session).
      // Each kind alternates between the instances: calls 0, 1 on A, 2, 3 on B, …
      const instanceOf = (index: number) => Math.floor(index / 2) % 2
      const replies = await Promise.all(Array.from({ length: CALLS }, (_, index) =>
        call(pair[instanceOf(index)]!.url, PATH.search, index % 2 === 0
          ? { body: searchBody(), cookie, network: uniqueNetwork(), timeoutMs: 30_000 }
          : { body: searchBody(), network, timeoutMs: 30_000 })))
      expect(replies.flatMap(admissionProblems)).toEqual([])

      const bySession = replies.filter((_, index) => index % 2 === 0 && replies[index]!.status === 200)
      const byNetwork = replies.filter((_, index) => index % 2 === 1 && replies[index]!.status === 200)
      const remaining = (admitted: Reply[]) => admitted.map((reply) => reply.json.meta.rate_limit.remaining as number).sort((a, b) => b - a)
      // Each admitted call saw its own count: remaining runs down to 0, once each.
      expect(remaining(bySession)).toEqual(Array.from({ length: LIMIT - 1 }, (_, index) => LIMIT - 2 - index))
      expect(remaining(byNetwork)).toEqual(Array.from({ length: LIMIT }, (_, index) => LIMIT - 1 - index))
      expect(bySession.filter((reply) => reply.token !== undefined)).toEqual([])
      expect(new Set(byNetwork.map((reply) => reply.token)).size).toBe(LIMIT)
      const split = (admitted: Reply[]) => [0, 1].map((instance) => admitted.filter((reply) => instanceOf(replies.indexOf(reply)) === instance).length)
      test.info().annotations.push({ type: 'admitted', description: `session: ${split(bySession).join(' + ')}, network: ${split(byNetwork).join(' + ')} (A + B)` })
      // Spent on both instances.
      for (const server of pair) {
        expectError(await call(server.url, PATH.search, { body: searchBody(), cookie, network: uniqueNetwork() }), 429, 'rate_limited')
        expectError(await call(server.url, PATH.search, { body: searchBody(), network }), 429, 'rate_limited')
      }
    })
  })

  test('concurrent repeats of one Idempotency-Key on both instances issue one policy', async () => {
    test.setTimeout(60_000)
    await withPair('instances-idempotency', { SANDBOX_RATE_LIMIT: '100000' }, async (pair, dbPath) => {
      const network = uniqueNetwork()
      const cookie = (await call(pair[0]!.url, PATH.session, { network })).token!
      const body = searchBody()
      const plans = expectOk(await call(pair[1]!.url, PATH.search, { body, cookie, network })).plans
      const issueBody = { plan_id: plans[0].plan_id, ...body, partner_reference: 'BK-INSTANCES' }
      const headers = { 'idempotency-key': `booking-${randomBytes(4).toString('hex')}` }

      const replies = await Promise.all(Array.from({ length: 100 }, (_, index) =>
        call(pair[index % 2]!.url, PATH.issue, { body: issueBody, cookie, network, headers, timeoutMs: 30_000 })))
      expect(replies.flatMap(admissionProblems)).toEqual([])
      expect(replies.filter((reply) => reply.status !== 200).length).toBe(0)
      expect(new Set(replies.map((reply) => reply.json.data.policy_ref)).size).toBe(1)
      expect(replies.filter((reply) => reply.headers.get('idempotent-replayed') === 'true').length).toBe(99)
      expect(await countRows(dbPath, 'policies')).toBe(1)
    })
  })

  test('a cancellation on one instance and its repeats on the other cancel once; without a key, one cancels and the rest are policy_cancelled', async () => {
    test.setTimeout(60_000)
    await withPair('instances-cancel', { SANDBOX_RATE_LIMIT: '100000' }, async (pair, dbPath) => {
      const network = uniqueNetwork()
      const cookie = (await call(pair[0]!.url, PATH.session, { network })).token!
      const body = searchBody()
      const plans = expectOk(await call(pair[1]!.url, PATH.search, { body, cookie, network })).plans
      const issue = async () => expectOk(await call(pair[0]!.url, PATH.issue, { body: { plan_id: plans[0].plan_id, ...body }, cookie, network })).policy_ref as string
      const cancel = (ref: string, index: number, headers: Record<string, string> = {}) =>
        call(pair[index % 2]!.url, `/api/sandbox/policy/${ref}/cancel`, { body: {}, cookie, network, headers, timeoutMs: 30_000 })

      const keyed = await issue()
      const headers = { 'idempotency-key': `cancel-${randomBytes(4).toString('hex')}` }
      const replies = await Promise.all(Array.from({ length: 20 }, (_, index) => cancel(keyed, index, headers)))
      expect(replies.flatMap(admissionProblems)).toEqual([])
      expect(new Set(replies.map((reply) => reply.json.data.cancelled_at)).size).toBe(1)
      expect(replies.filter((reply) => reply.headers.get('idempotent-replayed') === 'true').length).toBe(19)

      const plain = await issue()
      const racing = await Promise.all(Array.from({ length: 10 }, (_, index) => cancel(plain, index)))
      expect(racing.map((reply) => reply.status).sort()).toEqual([200, ...Array(9).fill(409)])
      for (const reply of racing.filter((answer) => answer.status === 409)) expect(replyProblems(reply, 409, 'policy_cancelled')).toEqual([])
      expect(await countRows(dbPath, 'policies', "status = 'cancelled'")).toBe(2)
    })
  })

  test('both instances deliver webhooks, and each event arrives exactly once', async () => {
    test.setTimeout(60_000)
    const hooks = await startReceiver()
    try {
      await withPair('instances-webhooks', { SANDBOX_RATE_LIMIT: '100000', SANDBOX_WEBHOOK_TARGETS: 'any' }, async (pair) => {
        const network = uniqueNetwork()
        const cookie = (await call(pair[0]!.url, PATH.session, { network })).token!
        expectOk(await call(pair[1]!.url, '/api/sandbox/webhook', { body: { url: hooks.url }, cookie, network }))
        const body = searchBody()
        const plans = expectOk(await call(pair[0]!.url, PATH.search, { body, cookie, network })).plans
        // 20 policies, issued on both instances at once: 40 events for two pollers to share.
        const issued = await Promise.all(Array.from({ length: 20 }, (_, index) =>
          call(pair[index % 2]!.url, PATH.issue, { body: { plan_id: plans[0].plan_id, ...body }, cookie, network, timeoutMs: 30_000 })))
        expect(issued.filter((reply) => reply.status !== 200).map((reply) => reply.text)).toEqual([])
        await expect.poll(() => hooks.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(40)
        // Any attempt made twice would have arrived by now too.
        await sleep(1_000)
        const ids = hooks.events().map((event) => event.id)
        expect(ids).toHaveLength(40)
        expect(new Set(ids).size).toBe(40)
      })
    } finally {
      await hooks.close()
    }
  })

  test('SIGKILL of one instance under load loses no acknowledged write', async () => {
    test.setTimeout(60_000)
    await withPair('instances-kill', { SANDBOX_RATE_LIMIT: '100000' }, async (pair, dbPath) => {
      const [victim, survivor] = pair as [RunningServer, RunningServer]
      const network = uniqueNetwork()
      const cookie = (await call(victim.url, PATH.session, { network })).token!
      const body = searchBody()
      const plans = expectOk(await call(victim.url, PATH.search, { body, cookie, network })).plans
      const issueBody = { plan_id: plans[0].plan_id, ...body }

      /** policy_ref → which instance acknowledged it. */
      const acknowledged = new Map<string, 'victim' | 'survivor'>()
      const unexpected: string[] = []
      let failedCalls = 0
      let running = true
      const lane = async (laneIndex: number) => {
        for (let turn = 0; running && turn < 200; turn++) {
          const server = (laneIndex + turn) % 2 === 0 ? victim : survivor
          try {
            const reply = await call(server.url, PATH.issue, { body: issueBody, cookie, network, timeoutMs: 10_000 })
            if (reply.status === 200) acknowledged.set(reply.json.data.policy_ref, server === victim ? 'victim' : 'survivor')
            else unexpected.push(`${reply.status} ${reply.text.slice(0, 200)}`)
          } catch {
            failedCalls++ // no answer: the victim is gone (connection refused or reset)
          }
        }
      }
      const lanes = Array.from({ length: 8 }, (_, index) => lane(index))
      // Kill once the victim has acknowledged a good number of writes, with requests in flight.
      const deadline = Date.now() + 15_000
      while ([...acknowledged.values()].filter((who) => who === 'victim').length < 40 && Date.now() < deadline) await sleep(10)
      expect(await victim.stop('SIGKILL')).toBeNull()
      const atKill = acknowledged.size
      // The survivor carries on alone: until it has acknowledged more (or the lanes run out).
      await expect.poll(() => acknowledged.size > atKill, { timeout: 15_000 }).toBe(true)
      running = false
      await Promise.all(lanes)
      expect(unexpected).toEqual([])
      expect(acknowledged.size).toBeGreaterThan(atKill) // the survivor kept answering

      // Every acknowledged policy is found through the survivor (a modify answers it).
      const refs = [...acknowledged.keys()]
      const checks = await Promise.all(refs.map((ref) => call(survivor.url, PATH.modify(ref), {
        body: { scenario: 'correct_partner_reference', partner_reference: `KEPT-${ref.slice(-6)}` }, cookie, network, timeoutMs: 30_000,
      })))
      const lost = refs.filter((ref, index) => checks[index]!.status !== 200 || checks[index]!.json.data.policy_ref !== ref)
      expect(lost).toEqual([])
      expect(await countRows(dbPath, 'policies')).toBeGreaterThanOrEqual(refs.length)
      const byVictim = [...acknowledged.values()].filter((who) => who === 'victim').length
      test.info().annotations.push({
        type: 'kill',
        description: `${refs.length} acknowledged (${byVictim} by the killed instance), ${failedCalls} calls without an answer, all found`,
      })
    })
  })

  test('both instances sweep expired sessions, and none is swept twice', async () => {
    test.setTimeout(150_000)
    const SESSIONS = 60
    const WAVES = 4
    // Sessions of 10 s, far longer than the waves take (about 3 s), so that every policy is counted
    // before any expires; 20 s only if this machine proves too slow for that.
    await withTimeSpans([10, 20], (TTL_SECONDS) => withPair(`instances-sweep-${TTL_SECONDS}`, {
      SANDBOX_RATE_LIMIT: '100000', SANDBOX_SESSION_TTL_SECONDS: String(TTL_SECONDS), SANDBOX_SWEEP_INTERVAL_SECONDS: '1',
    }, async (pair, dbPath) => {
      // Each session searches and issues a policy (quotes, a policy, an idempotency record), its
      // calls spread over both instances. Sessions open in waves, so that they expire over a few
      // seconds and both instances' sweeps find some.
      const body = searchBody()
      const open = async (index: number) => {
        const network = uniqueNetwork()
        const at = (step: number) => pair[(index + step) % 2]!.url
        const cookie = (await call(at(0), PATH.session, { network })).token!
        const plans = expectOk(await call(at(1), PATH.search, { body, cookie, network })).plans
        expectOk(await call(at(2), PATH.issue, { body: { plan_id: plans[0].plan_id, ...body }, cookie, network, headers: { 'idempotency-key': `sweep-${index}` } }))
        return cookie
      }
      const tokens: string[] = []
      // Every policy is counted before the first session ends.
      await before(Date.now() + TTL_SECONDS * 1000, async () => {
        for (let wave = 0; wave < WAVES; wave++) {
          const started = Date.now()
          tokens.push(...await Promise.all(Array.from({ length: SESSIONS / WAVES }, (_, index) => open(wave * (SESSIONS / WAVES) + index))))
          await sleep(700 - (Date.now() - started))
        }
        expect(await countRows(dbPath, 'policies')).toBe(SESSIONS)
      })

      // Whole lines only: the last one may still be arriving.
      const purged = () => pair.map((server) => server.stdout().split('\n').slice(0, -1)
        .filter((line) => line.includes('"msg":"sweep"'))
        .reduce((sum, line) => sum + Number(JSON.parse(line).sessionsPurged ?? 0), 0))
      const total = () => purged().reduce((a, b) => a + b, 0)
      const deadline = Date.now() + (TTL_SECONDS + 15) * 1000
      while (total() < SESSIONS && Date.now() < deadline) await sleep(200)
      await sleep(2_500) // two more sweep intervals on each: a session swept twice would show now
      const [byA, byB] = purged()
      test.info().annotations.push({ type: 'sweep', description: `sessionsPurged: ${byA} by A, ${byB} by B` })
      expect(byA! + byB!, `sessionsPurged by A (${byA}) and B (${byB})`).toBe(SESSIONS)

      // Each session's data is gone; its token still gets a precise session_expired.
      for (const table of ['quotes', 'policies', 'idempotency']) expect(await countRows(dbPath, table), table).toBe(0)
      for (const [index, cookie] of tokens.slice(0, 4).entries()) {
        expectError(await call(pair[index % 2]!.url, PATH.search, { body, cookie, network: uniqueNetwork() }), 401, 'session_expired')
      }
    }))
  })
})
