/**
 * Concurrency (issue #4): hundreds of simultaneous calls never admit more than the fair-use limit,
 * concurrent repeats of one Idempotency-Key create one policy, and both hold with two server
 * processes sharing one database (one SQLite file; one PostgreSQL database on `pg`). No call may
 * end in a 5xx or show a driver error.
 */
import { test, expect } from './support/fixtures'
import { startServer, type RunningServer } from './support/server'
import {
  LEAK_PATTERNS, PATH, call, expectError, expectOk, replyProblems, removeDatabase, scratchDatabase, tripFrom,
  uniqueNetwork, type CallOptions, type Reply,
} from './support/hardening'
import { countRows, queryStore } from './support/store'

const LIMIT = 50
const CALLS = 300

/** Fires all calls at once (round-robin over the servers) and answers every reply. */
async function burst(servers: RunningServer[], count: number, request: (index: number) => { path: string } & CallOptions): Promise<Reply[]> {
  return Promise.all(
    Array.from({ length: count }, (_, index) => {
      const { path, ...options } = request(index)
      return call(servers[index % servers.length]!.url, path, { timeoutMs: 30_000, ...options })
    }),
  )
}

/** No 5xx, no driver error text; every refusal is `rate_limited` with Retry-After. Answers the 200s. */
function admittedOf(replies: Reply[]): Reply[] {
  // One assertion over all replies: Playwright's expect is slow when called thousands of times.
  const problems: string[] = []
  for (const reply of replies) {
    if (reply.status === 200) {
      if (reply.json?.ok !== true) problems.push(`200 without ok: ${reply.text.slice(0, 200)}`)
      for (const pattern of LEAK_PATTERNS) if (pattern.test(reply.text)) problems.push(`200 matching ${pattern}`)
      continue
    }
    problems.push(...replyProblems(reply, 429, 'rate_limited'))
    if (!(Number(reply.headers.get('retry-after')) >= 1)) problems.push(`429 without Retry-After`)
    if (reply.token !== undefined) problems.push('a refused call opened a session')
  }
  expect(problems).toEqual([])
  return replies.filter((reply) => reply.status === 200)
}

/** Each admitted call saw its own count: `remaining` runs from limit - first - 1 down to 0, once each. */
function expectDistinctRemaining(admitted: Reply[], alreadyUsed: number) {
  const remaining = admitted.map((reply) => reply.json.meta.rate_limit.remaining).sort((a, b) => b - a)
  expect(remaining).toEqual(Array.from({ length: LIMIT - alreadyUsed }, (_, index) => LIMIT - alreadyUsed - 1 - index))
}

const searchBody = () => ({ trip: tripFrom(12, 5), travellers: [{ age: 35 }] })

async function withServers(name: string, count: number, env: Record<string, string>, work: (servers: RunningServer[], dbPath: string) => Promise<void>) {
  const dbPath = scratchDatabase(name)
  const servers: RunningServer[] = []
  try {
    // One after the other: the first creates the schema, the others find it.
    for (let index = 0; index < count; index++) servers.push(await startServer({ SANDBOX_DB_PATH: dbPath, ...env }))
    await work(servers, dbPath)
  } finally {
    await Promise.all(servers.map((server) => server.stop('SIGKILL')))
    removeDatabase(dbPath)
  }
}

for (const processes of [1, 2]) {
  const where = processes === 1 ? 'one process' : 'two processes sharing one database'

  test.describe(`concurrency: ${where}`, () => {
    test(`${CALLS} concurrent calls on one session admit exactly the limit (${LIMIT})`, async () => {
      test.setTimeout(60_000)
      await withServers('concurrency-session', processes, { SANDBOX_RATE_LIMIT: String(LIMIT) }, async (servers, dbPath) => {
        const opened = await call(servers[0]!.url, PATH.session, { network: uniqueNetwork() })
        expectOk(opened)
        const cookie = opened.token!
        // Every call from a network of its own: only the session's counter can bind.
        const replies = await burst(servers, CALLS, () => ({ path: PATH.search, body: searchBody(), cookie, network: uniqueNetwork() }))
        const admitted = admittedOf(replies)
        expect(admitted.length).toBe(LIMIT - 1)
        expectDistinctRemaining(admitted, 1)
        expect(admitted.filter((reply) => reply.token !== undefined).length, 'the session is reused, not replaced').toBe(0)
        expectError(await call(servers[0]!.url, PATH.search, { body: searchBody(), cookie, network: uniqueNetwork() }), 429, 'rate_limited')
        // What the counters hold (both engines keep rate_hits (key, at, hits)).
        const [hits] = await queryStore<{ n: number }>(dbPath, "SELECT SUM(hits) AS n FROM rate_hits WHERE key LIKE 's:%'")
        expect(hits!.n).toBe(LIMIT)
        test.info().annotations.push({ type: 'concurrency', description: `${where}: session ${admitted.length + 1}/${LIMIT} admitted of ${CALLS + 1}` })
      })
    })

    test(`${CALLS} concurrent calls from one network admit exactly the limit and open that many sessions`, async () => {
      test.setTimeout(60_000)
      await withServers('concurrency-network', processes, { SANDBOX_RATE_LIMIT: String(LIMIT) }, async (servers, dbPath) => {
        const network = uniqueNetwork()
        // No cookie: every admitted call opens a session, every refused one must not.
        const replies = await burst(servers, CALLS, () => ({ path: PATH.search, body: searchBody(), network }))
        const admitted = admittedOf(replies)
        expect(admitted.length).toBe(LIMIT)
        expectDistinctRemaining(admitted, 0)
        const tokens = new Set(admitted.map((reply) => reply.token))
        expect(tokens.size).toBe(LIMIT)
        expect(tokens.has(undefined)).toBe(false)
        const sessions = await countRows(dbPath, 'sessions')
        expect(sessions).toBe(LIMIT)
        test.info().annotations.push({ type: 'concurrency', description: `${where}: network ${admitted.length}/${LIMIT} admitted of ${CALLS}, ${sessions} sessions` })
      })
    })

    test(`${CALLS} concurrent repeats of one Idempotency-Key issue one policy and endorse once`, async () => {
      test.setTimeout(60_000)
      await withServers('concurrency-idempotency', processes, { SANDBOX_RATE_LIMIT: '100000' }, async (servers, dbPath) => {
        const network = uniqueNetwork()
        const opened = await call(servers[0]!.url, PATH.session, { network })
        const cookie = opened.token!
        const body = searchBody()
        const plans = expectOk(await call(servers[0]!.url, PATH.search, { body, cookie, network })).plans
        const issueBody = { plan_id: plans[0].plan_id, ...body, partner_reference: 'BK-CONCURRENT' }

        const issued = await burst(servers, CALLS, () => ({ path: PATH.issue, body: issueBody, cookie, network, headers: { 'idempotency-key': 'one-booking' } }))
        expect(admittedOf(issued).length).toBe(CALLS)
        const refs = new Set(issued.map((reply) => reply.json.data.policy_ref))
        expect(refs.size).toBe(1)
        const replayed = issued.filter((reply) => reply.headers.get('idempotent-replayed') === 'true')
        expect(replayed.length).toBe(CALLS - 1)
        const [policyRef] = refs as Set<string>

        const modifyBody = { scenario: 'correct_partner_reference', partner_reference: 'BK-CORRECTED' }
        const modified = await burst(servers, CALLS, () => ({ path: PATH.modify(policyRef!), body: modifyBody, cookie, network, headers: { 'idempotency-key': 'one-correction' } }))
        expect(admittedOf(modified).length).toBe(CALLS)
        expect(new Set(modified.map((reply) => reply.json.data.endorsement.sequence))).toEqual(new Set([1]))

        expect(await countRows(dbPath, 'policies')).toBe(1)
        expect(await countRows(dbPath, 'endorsements')).toBe(1)
      })
    })
  })
}
