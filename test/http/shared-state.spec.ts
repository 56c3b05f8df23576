/**
 * The guarantees that must hold however many processes share one store (issues #4 and 10), looped
 * over the deployments that share state: one process (the baseline, every target; an embedded file
 * serves one process, startup.spec.ts), and two Bun instances on one PostgreSQL database (`pg`). Each test
 * starts its own deployment (its own configuration, a fresh database) and spreads its calls over
 * the processes, A, B, A, …
 *
 * - a burst of concurrent calls admits exactly the limit, per session and per network;
 * - concurrent repeats of one Idempotency-Key issue one policy and endorse once;
 * - a cancellation repeated on both processes cancels once;
 * - webhook deliveries are shared: each event arrives once;
 * - SIGKILL of one process under load loses no acknowledged write;
 * - both processes sweep, and no expired session is swept twice.
 *
 * No call may end in a 5xx or show a driver error. The last four need two processes: they run on `pg`.
 */
import { randomBytes } from 'node:crypto'
import {
  API,
  LEAK_PATTERNS,
  before,
  call,
  errorProblems,
  expect,
  expectError,
  expectOk,
  openSession,
  sleep,
  test,
  tripFrom,
  uniqueNetwork,
  withTimeSpans,
  type CallOptions,
  type PrivateServer,
  type Reply,
} from './support/client'
import { startReceiver } from './support/receiver'
import { scratchDatabase } from './support/server'
import { countRows, engine, queryStore } from './support/store'

const LIMIT = 50
const CALLS = 300

interface Deployment {
  name: string
  processes: 1 | 2
  runsHere(): boolean
}

const DEPLOYMENTS: Deployment[] = [
  { name: 'one process', processes: 1, runsHere: () => true },
  { name: 'two instances on one PostgreSQL database', processes: 2, runsHere: () => engine() === 'postgres' },
]

type Start = (name: string, env?: Record<string, string>, options?: { dbPath?: string }) => Promise<PrivateServer>

/**
 * The deployment's processes on one fresh database. Two PostgreSQL instances start together (each
 * runs the migrations: they must not trip over each other).
 */
async function startDeployment(deployment: Deployment, privateServer: Start, name: string, env: Record<string, string>): Promise<PrivateServer[]> {
  const dbPath = scratchDatabase(name)
  const start = () => privateServer(name, env, { dbPath })
  if (deployment.processes === 1) return [await start()]
  return Promise.all([start(), start()])
}

/** Problems with a reply that must be a 200 or a `rate_limited` 429 (no 5xx, no driver text). */
function admissionProblems(reply: Reply): string[] {
  if (reply.status === 200) {
    const leaks = LEAK_PATTERNS.filter((pattern) => pattern.test(reply.text)).map((pattern) => `200 matching ${pattern}`)
    return reply.json?.ok === true ? leaks : [`200 without ok: ${reply.text.slice(0, 200)}`, ...leaks]
  }
  const problems = errorProblems(reply, 429, 'rate_limited')
  if (!(Number(reply.headers.get('retry-after')) >= 1)) problems.push('429 without Retry-After')
  if (reply.token !== undefined) problems.push('a refused call opened a session')
  return problems
}

/** Fires `count` calls at once, call i on process i mod n; answers every reply. */
function burst(servers: PrivateServer[], count: number, request: (index: number) => { path: string } & CallOptions): Promise<Reply[]> {
  return Promise.all(
    Array.from({ length: count }, (_, index) => {
      const { path, ...options } = request(index)
      return call(servers[index % servers.length]!.url, path, { timeoutMs: 30_000, ...options })
    }),
  )
}

/** Each admitted call saw its own count: `remaining` runs from `from` down to 0, once each. */
const remainingOf = (admitted: Reply[]) => admitted.map((reply) => reply.json.meta.rate_limit.remaining as number).sort((a, b) => b - a)
const countdown = (from: number) => Array.from({ length: from + 1 }, (_, index) => from - index)

const searchBody = () => ({ trip: tripFrom(12, 5), travellers: [{ age: 35 }] })

/** A session on the first process, and the plans of a search on the last. */
const openSessionOn = (servers: PrivateServer[]) => openSession(servers[0]!.url, servers.at(-1)!.url, searchBody())

for (const deployment of DEPLOYMENTS) {
  test.describe(`shared state: ${deployment.name}`, () => {
    test.skip(() => !deployment.runsHere(), `${deployment.name}: not this target's store`)
    const onTwoProcesses = () => test.skip(deployment.processes === 1, 'two processes: on pg only')

    test(`${CALLS} concurrent calls admit exactly the limit (${LIMIT}) per session and per network, on every process`, async ({ privateServer }) => {
      test.setTimeout(60_000)
      const servers = await startDeployment(deployment, privateServer, 'shared-limit', { SANDBOX_RATE_LIMIT: String(LIMIT) })
      const opened = await call(servers[0]!.url, API.session, { network: uniqueNetwork() })
      const { session_ref: sessionRef } = (await expectOk(opened)).data
      const cookie = opened.token!
      const network = uniqueNetwork()
      // Even calls: the one session, each from a network of its own (only the session binds).
      // Odd calls: one network, no cookie (only the network binds; each admitted call opens a session).
      // Each kind alternates between the processes: calls 0, 1 on A, 2, 3 on B, …
      const processOf = (index: number) => Math.floor(index / 2) % servers.length
      const replies = await Promise.all(
        Array.from({ length: CALLS }, (_, index) =>
          call(
            servers[processOf(index)]!.url,
            API.search,
            index % 2 === 0 ? { body: searchBody(), cookie, network: uniqueNetwork(), timeoutMs: 30_000 } : { body: searchBody(), network, timeoutMs: 30_000 },
          ),
        ),
      )
      expect(replies.flatMap(admissionProblems)).toEqual([])

      const bySession = replies.filter((reply, index) => index % 2 === 0 && reply.status === 200)
      const byNetwork = replies.filter((reply, index) => index % 2 === 1 && reply.status === 200)
      expect(remainingOf(bySession)).toEqual(countdown(LIMIT - 2))
      expect(remainingOf(byNetwork)).toEqual(countdown(LIMIT - 1))
      expect(
        bySession.filter((reply) => reply.token !== undefined),
        'the session is reused, not replaced',
      ).toEqual([])
      const tokens = new Set(byNetwork.map((reply) => reply.token))
      expect(tokens.size).toBe(LIMIT)
      expect(tokens.has(undefined)).toBe(false)
      const split = (admitted: Reply[]) => servers.map((_, at) => admitted.filter((reply) => processOf(replies.indexOf(reply)) === at).length)
      test.info().annotations.push({ type: 'admitted', description: `session: ${split(bySession).join(' + ')}, network: ${split(byNetwork).join(' + ')}` })
      // Spent on every process.
      for (const server of servers) {
        await expectError(await call(server.url, API.search, { body: searchBody(), cookie, network: uniqueNetwork() }), 429, 'rate_limited')
        await expectError(await call(server.url, API.search, { body: searchBody(), network }), 429, 'rate_limited')
      }
      // What the store holds (both engines keep rate_hits (key, at, hits)): the session's hits, and
      // one session per admitted cookie-less call besides the one opened. The embedded engine
      // writes them behind, within its interval.
      const sessionHits = async () =>
        (await queryStore<{ n: number }>(servers[0]!.dbPath, `SELECT SUM(hits) AS n FROM rate_hits WHERE key = 's:${sessionRef}'`))[0]!.n
      await expect.poll(sessionHits).toBe(LIMIT)
      await expect.poll(() => countRows(servers[0]!.dbPath, 'sessions')).toBe(LIMIT + 1)
      // And no more once every write-behind interval has passed (200 ms): nothing counted twice.
      await sleep(600)
      expect(await sessionHits()).toBe(LIMIT)
      expect(await countRows(servers[0]!.dbPath, 'sessions')).toBe(LIMIT + 1)
    })

    test(`${CALLS} concurrent repeats of one Idempotency-Key issue one policy and endorse once`, async ({ privateServer }) => {
      test.setTimeout(60_000)
      const servers = await startDeployment(deployment, privateServer, 'shared-idempotency', { SANDBOX_RATE_LIMIT: '100000' })
      const { network, cookie, body, plans } = await openSessionOn(servers)
      const issueBody = { plan_id: plans[0].plan_id, ...body, partner_reference: 'BK-CONCURRENT' }
      const issueKey = { 'idempotency-key': `booking-${randomBytes(4).toString('hex')}` }

      const issued = await burst(servers, CALLS, () => ({ path: API.issue, body: issueBody, cookie, network, headers: issueKey }))
      expect(issued.flatMap(admissionProblems)).toEqual([])
      expect(issued.filter((reply) => reply.status !== 200).length).toBe(0)
      const refs = new Set(issued.map((reply) => reply.json.data.policy_ref as string))
      expect(refs.size).toBe(1)
      expect(issued.filter((reply) => reply.headers.get('idempotent-replayed') === 'true').length).toBe(CALLS - 1)
      const [policyRef] = refs

      const modifyBody = { scenario: 'correct_partner_reference', partner_reference: 'BK-CORRECTED' }
      const modified = await burst(servers, CALLS, () => ({
        path: API.modify(policyRef!),
        body: modifyBody,
        cookie,
        network,
        headers: { 'idempotency-key': 'one-correction' },
      }))
      expect(modified.flatMap(admissionProblems)).toEqual([])
      expect(modified.filter((reply) => reply.status !== 200).length).toBe(0)
      expect(new Set(modified.map((reply) => reply.json.data.endorsement.sequence))).toEqual(new Set([1]))

      expect(await countRows(servers[0]!.dbPath, 'policies')).toBe(1)
      expect(await countRows(servers[0]!.dbPath, 'endorsements')).toBe(1)
    })

    test('a cancellation on one process and its repeats on the other cancel once; without a key, one cancels and the rest are policy_cancelled', async ({
      privateServer,
    }) => {
      onTwoProcesses()
      test.setTimeout(60_000)
      const servers = await startDeployment(deployment, privateServer, 'shared-cancel', { SANDBOX_RATE_LIMIT: '100000' })
      const { network, cookie, body, plans } = await openSessionOn(servers)
      const issue = async () =>
        (await expectOk(await call(servers[0]!.url, API.issue, { body: { plan_id: plans[0].plan_id, ...body }, cookie, network }))).data.policy_ref as string
      const cancel = (ref: string, count: number, headers: Record<string, string> = {}) =>
        burst(servers, count, () => ({ path: API.cancel(ref), body: {}, cookie, network, headers }))

      const replies = await cancel(await issue(), 20, { 'idempotency-key': `cancel-${randomBytes(4).toString('hex')}` })
      expect(replies.flatMap(admissionProblems)).toEqual([])
      expect(new Set(replies.map((reply) => reply.json.data.cancelled_at)).size).toBe(1)
      expect(replies.filter((reply) => reply.headers.get('idempotent-replayed') === 'true').length).toBe(19)

      const racing = await cancel(await issue(), 10)
      expect(racing.map((reply) => reply.status).sort()).toEqual([200, ...Array(9).fill(409)])
      for (const reply of racing.filter((answer) => answer.status === 409)) expect(errorProblems(reply, 409, 'policy_cancelled')).toEqual([])
      expect(await countRows(servers[0]!.dbPath, 'policies', "status = 'cancelled'")).toBe(2)
    })

    test('both processes deliver webhooks, and each event arrives exactly once', async ({ privateServer }) => {
      onTwoProcesses()
      test.setTimeout(60_000)
      const hooks = await startReceiver()
      try {
        const servers = await startDeployment(deployment, privateServer, 'shared-webhooks', { SANDBOX_RATE_LIMIT: '100000', SANDBOX_WEBHOOK_TARGETS: 'any' })
        const { network, cookie, body, plans } = await openSessionOn(servers)
        await expectOk(await call(servers[1]!.url, API.webhook, { body: { url: hooks.url }, cookie, network }))
        // 20 policies, issued on both processes at once: 40 events for two pollers to share.
        const issued = await burst(servers, 20, () => ({ path: API.issue, body: { plan_id: plans[0].plan_id, ...body }, cookie, network }))
        expect(issued.filter((reply) => reply.status !== 200).map((reply) => reply.text)).toEqual([])
        await expect.poll(() => hooks.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(40)
        // Any attempt made twice would have arrived by now too.
        await sleep(1_000)
        const ids = hooks.events().map((event) => event.id)
        expect(ids).toHaveLength(40)
        expect(new Set(ids).size).toBe(40)
      } finally {
        await hooks.close()
      }
    })

    test('SIGKILL of one process under load loses no acknowledged write', async ({ privateServer }) => {
      onTwoProcesses()
      test.setTimeout(60_000)
      const servers = await startDeployment(deployment, privateServer, 'shared-kill', { SANDBOX_RATE_LIMIT: '100000' })
      const [victim, survivor] = servers as [PrivateServer, PrivateServer]
      const { network, cookie, body, plans } = await openSessionOn([victim])
      const issueBody = { plan_id: plans[0].plan_id, ...body }

      /** policy_ref → which process acknowledged it. */
      const acknowledged = new Map<string, 'victim' | 'survivor'>()
      const unexpected: string[] = []
      let failedCalls = 0
      let running = true
      const lane = async (laneIndex: number) => {
        for (let turn = 0; running && turn < 200; turn++) {
          const server = (laneIndex + turn) % 2 === 0 ? victim : survivor
          try {
            const reply = await call(server.url, API.issue, { body: issueBody, cookie, network, timeoutMs: 10_000 })
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
      const checks = await Promise.all(
        refs.map((ref) =>
          call(survivor.url, API.modify(ref), {
            body: { scenario: 'correct_partner_reference', partner_reference: `KEPT-${ref.slice(-6)}` },
            cookie,
            network,
            timeoutMs: 30_000,
          }),
        ),
      )
      const lost = refs.filter((ref, index) => checks[index]!.status !== 200 || checks[index]!.json.data.policy_ref !== ref)
      expect(lost).toEqual([])
      expect(await countRows(survivor.dbPath, 'policies')).toBeGreaterThanOrEqual(refs.length)
      const byVictim = [...acknowledged.values()].filter((who) => who === 'victim').length
      test.info().annotations.push({
        type: 'kill',
        description: `${refs.length} acknowledged (${byVictim} by the killed process), ${failedCalls} calls without an answer, all found`,
      })
    })

    test('both processes sweep expired sessions, and none is swept twice', async ({ privateServer }) => {
      onTwoProcesses()
      test.setTimeout(150_000)
      const SESSIONS = 60
      const WAVES = 4
      // Sessions of 10 s, far longer than the waves take (about 3 s), so that every policy is counted
      // before any expires; 20 s only if this machine proves too slow for that.
      let earlier: PrivateServer[] = []
      await withTimeSpans([10, 20], async (TTL_SECONDS) => {
        // A longer span's attempt starts with the shorter one's servers, sweeping every second, gone.
        await Promise.all(earlier.map((server) => server.stop('SIGKILL')))
        const servers = (earlier = await startDeployment(deployment, privateServer, `shared-sweep-${TTL_SECONDS}`, {
          SANDBOX_RATE_LIMIT: '100000',
          SANDBOX_SESSION_TTL_SECONDS: String(TTL_SECONDS),
          SANDBOX_SWEEP_INTERVAL_SECONDS: '1',
        }))
        const { dbPath } = servers[0]!
        // Each session searches and issues a policy (quotes, a policy, an idempotency record), its
        // calls spread over both processes. Sessions open in waves, so that they expire over a few
        // seconds and both processes' sweeps find some.
        const body = searchBody()
        const open = async (index: number) => {
          const network = uniqueNetwork()
          const at = (step: number) => servers[(index + step) % 2]!.url
          const cookie = (await call(at(0), API.session, { network })).token!
          const plans = (await expectOk(await call(at(1), API.search, { body, cookie, network }))).data.plans
          await expectOk(
            await call(at(2), API.issue, { body: { plan_id: plans[0].plan_id, ...body }, cookie, network, headers: { 'idempotency-key': `sweep-${index}` } }),
          )
          return cookie
        }
        const tokens: string[] = []
        // Every policy is counted before the first session ends.
        await before(Date.now() + TTL_SECONDS * 1000, async () => {
          for (let wave = 0; wave < WAVES; wave++) {
            const started = Date.now()
            tokens.push(...(await Promise.all(Array.from({ length: SESSIONS / WAVES }, (_, index) => open(wave * (SESSIONS / WAVES) + index)))))
            await sleep(700 - (Date.now() - started))
          }
          expect(await countRows(dbPath, 'policies')).toBe(SESSIONS)
        })

        // Whole lines only: the last one may still be arriving.
        const purged = () =>
          servers.map((server) =>
            server
              .stdout()
              .split('\n')
              .slice(0, -1)
              .filter((line) => line.includes('"msg":"sweep"'))
              .reduce((sum, line) => sum + Number(JSON.parse(line).sessionsPurged ?? 0), 0),
          )
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
          await expectError(await call(servers[index % 2]!.url, API.search, { body, cookie, network: uniqueNetwork() }), 401, 'session_expired')
        }
      })
    })
  })
}
