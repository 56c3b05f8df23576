import type { APIRequestContext, APIResponse } from '@playwright/test'
import {
  ages,
  API,
  before,
  expect,
  expectError,
  expectOk,
  policyWindow,
  rateLimitHeader,
  raw,
  searchBody,
  sessionCookie,
  sleep,
  test,
  tripFrom,
  uniqueNetwork,
  withTimeSpans,
} from './support/client'

const json = { 'content-type': 'application/json' }

/**
 * A 429 with the contract's headers; answers its body. Pass the call itself (not awaited), so that
 * the time it was sent is known: Retry-After is counted from the moment the server admitted it.
 */
async function refused(answer: Promise<APIResponse>, expectedResetAt?: string, sentAt = Date.now()) {
  const response = await answer
  const checkedAt = Date.now()
  await expectError(response, 429, 'rate_limited')
  const body = await response.json()
  expect(body.meta.rate_limit.remaining).toBe(0)
  if (expectedResetAt) expect(body.meta.rate_limit.reset_at).toBe(expectedResetAt)
  const retryAfter = response.headers()['retry-after']
  expect(retryAfter).toMatch(/^\d+$/)
  const seconds = Number(retryAfter)
  expect(seconds).toBeGreaterThan(0)
  // Whole seconds until reset_at, rounded up, as seen between sending and checking the answer.
  const resetAt = Date.parse(body.meta.rate_limit.reset_at)
  expect(seconds).toBeGreaterThanOrEqual(Math.ceil((resetAt - checkedAt) / 1000))
  expect(seconds).toBeLessThanOrEqual(Math.ceil((resetAt - sentAt) / 1000))
  expect(Math.abs(rateLimitHeader(response).reset - seconds)).toBeLessThanOrEqual(1)
  expect(rateLimitHeader(response).remaining).toBe(0)
  expect(sessionCookie(response)).toBeUndefined()
  return body
}

test.describe('fair use on the shared server (30 per 10 minutes)', () => {
  test('per session: the 31st call on one session is refused even from fresh networks; others are unaffected', async ({ newClient }) => {
    const client = await newClient()
    const created = await client.post(API.session)
    const first = await expectOk(created)
    expect(first.meta.rate_limit).toEqual({ limit: 30, remaining: 29, reset_at: first.meta.rate_limit.reset_at })
    const resetAt = first.meta.rate_limit.reset_at
    expect(Math.abs(Date.parse(resetAt) - (Date.now() + 600_000))).toBeLessThan(5_000)
    expect(created.headers()['ratelimit-policy']).toBe('"sandbox";q=30;w=600')
    for (let call = 2; call <= 30; call++) {
      // Each call from another network: only the session's counter can run out.
      const response = await client.post(API.search, { data: searchBody(), headers: { 'x-forwarded-for': uniqueNetwork() } })
      const body = await expectOk(response)
      expect(body.meta.rate_limit.remaining).toBe(30 - call)
      expect(rateLimitHeader(response).remaining).toBe(30 - call)
      expect(body.meta.rate_limit.reset_at).toBe(resetAt)
      expect(Math.abs(rateLimitHeader(response).reset - (Date.parse(resetAt) - Date.now()) / 1000)).toBeLessThanOrEqual(2)
    }
    const blockedNetwork = uniqueNetwork()
    const denied = await refused(client.post(API.search, { data: searchBody(), headers: { 'x-forwarded-for': blockedNetwork } }), resetAt)
    // The refusal belongs to the session.
    expect(denied.meta.session_expires_at).toBe(first.data.expires_at)
    // Refusals count against nothing: the window does not move, and the network stays untouched.
    await refused(client.post(API.search, { data: searchBody(), headers: { 'x-forwarded-for': uniqueNetwork() } }), resetAt)
    const other = await newClient({ network: blockedNetwork })
    const fresh = await expectOk(await other.post(API.search, { data: searchBody() }))
    expect(fresh.meta.rate_limit.remaining).toBe(29)
  })

  test('per network: 31 cookie-less calls from one network; the 31st is refused and creates no session', async ({ newClient }) => {
    const network = uniqueNetwork()
    // 31 clients with empty cookie jars, all on the one network.
    const clients = await Promise.all(Array.from({ length: 31 }, () => newClient({ network })))
    for (let call = 1; call <= 30; call++) {
      const response = await clients[call - 1]!.post(API.search, { data: searchBody() })
      const body = await expectOk(response)
      expect(sessionCookie(response)).toBeDefined()
      expect(body.meta.rate_limit.remaining).toBe(30 - call)
    }
    const lastClient = clients[30]!
    const denied = await refused(lastClient.post(API.search, { data: searchBody() }))
    expect(denied.meta.session_expires_at).toBeNull()
    expect((await lastClient.storageState()).cookies).toEqual([])

    // A session from elsewhere, calling from the exhausted network: refused, and not counted against the session.
    const traveller = await newClient()
    expect((await expectOk(await traveller.post(API.session))).meta.rate_limit.remaining).toBe(29)
    await refused(traveller.post(API.search, { data: searchBody(), headers: { 'x-forwarded-for': network } }))
    const after = await expectOk(await traveller.post(API.search, { data: searchBody() }))
    expect(after.meta.rate_limit.remaining).toBe(28)

    // The rate check comes before anything about the body...
    const bodies: [Record<string, string>, string][] = [
      [json, '{ not json'],
      [json, JSON.stringify({ ...searchBody(), pad: 'x'.repeat(20_000) })],
      [{ 'content-type': 'text/plain' }, 'hello'],
      [json, JSON.stringify({ ...searchBody(), email: 'a@b.example' })],
      [json, JSON.stringify({ trip: 'bad' })],
    ]
    for (const [headers, data] of bodies) await refused(lastClient.post(API.search, { headers, data: raw(data) }))
    await refused(lastClient.post(API.issue, { data: { plan_id: 'x', trip: tripFrom(3, 3), travellers: ages(30) } }))
    // ...but after route and method.
    await expectError(await lastClient.get(API.search), 405, 'method_not_allowed')
    await expectError(await lastClient.post('/api/sandbox/elsewhere', { headers: json, data: raw('{') }), 404, 'not_found')
    expect((await lastClient.storageState()).cookies).toEqual([])
  })

  test('IPv6 callers share one counter per /64', async ({ newClient }) => {
    const prefix = uniqueNetwork().replace(/::1$/, '')
    const one = await expectOk(await (await newClient({ network: `${prefix}::1` })).post(API.search, { data: searchBody() }))
    const two = await expectOk(await (await newClient({ network: `${prefix}:0:0:0:abcd` })).post(API.search, { data: searchBody() }))
    expect(one.meta.rate_limit.remaining).toBe(29)
    expect(two.meta.rate_limit.remaining).toBe(28)
  })

  test('X-Forwarded-For entries with a port or brackets count per client, not all against the proxy', async ({ newClient }) => {
    const v6 = uniqueNetwork()
    const v4 = `198.18.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`
    const remaining = async (network: string) =>
      (await expectOk(await (await newClient({ network })).post(API.search, { data: searchBody() }))).meta.rate_limit.remaining
    expect(await remaining(`${v4}:41234`)).toBe(29)
    expect(await remaining(`${v4}:50000`)).toBe(28) // the same client, another source port
    expect(await remaining(`[${v6}]:443`)).toBe(29)
    expect(await remaining(`[${v6}]`)).toBe(28)
    expect(await remaining(v6)).toBe(27)
  })

  test('a burst of 40 concurrent calls on one fresh session and network admits exactly 30 in all', async ({ newClient }) => {
    const client = await newClient()
    expect((await expectOk(await client.post(API.session))).meta.rate_limit.remaining).toBe(29)
    const sentAt = Date.now()
    const responses = await Promise.all(Array.from({ length: 40 }, () => client.post(API.search, { data: searchBody() })))
    const admitted = responses.filter((response) => response.status() === 200)
    expect(admitted.length).toBe(29)
    const remaining = await Promise.all(admitted.map(async (response) => (await expectOk(response)).meta.rate_limit.remaining))
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 29 }, (_, index) => index))
    for (const response of responses.filter((r) => r.status() !== 200)) await refused(Promise.resolve(response), undefined, sentAt)
    await refused(client.post(API.search, { data: searchBody() }))
  })
})

test.describe('fair use with a short window (5 per 2 seconds, or more on a slow machine)', () => {
  test('the window rolls: requests are admitted again as the oldest leave it; reset_at and Retry-After point there', async ({ privateServer, newClient }) => {
    test.setTimeout(90_000)
    // A 2-second window; a longer one only if this machine cannot make the calls in the margins it leaves.
    await withTimeSpans([2, 4, 8], async (seconds) => {
      const window = seconds * 1000
      const server = await privateServer(`rate-rolling-window-${seconds}`, { SANDBOX_RATE_LIMIT: '5', SANDBOX_RATE_WINDOW_SECONDS: String(seconds) })
      const client = await newClient({ baseURL: server.url })
      const call = () => client.post(API.search, { data: searchBody() })

      const t0 = Date.now()
      const createdResponse = await client.post(API.session)
      const created = await expectOk(createdResponse)
      expect(created.data.limits).toEqual({ requests: 5, window_minutes: seconds / 60, session_minutes: 60 })
      expect(policyWindow(createdResponse)).toBe(seconds)
      expect(created.meta.rate_limit.remaining).toBe(4)
      const firstReset = Date.parse(created.meta.rate_limit.reset_at)
      expect(firstReset).toBeGreaterThanOrEqual(t0 + window - 5)
      expect(firstReset).toBeLessThanOrEqual(Date.now() + window + 5)
      // The first batch, then the second half a window later: both before the first leaves.
      await before(t0 + window / 4, async () => {
        for (const remaining of [3, 2]) expect((await expectOk(await call())).meta.rate_limit.remaining).toBe(remaining)
      })
      const firstBatchDone = Date.now()

      await sleep(t0 + window / 2 - Date.now())
      const t1 = Date.now()
      await before(firstReset, async () => {
        for (const remaining of [1, 0]) {
          const body = await expectOk(await call())
          expect(body.meta.rate_limit.remaining).toBe(remaining)
          expect(body.meta.rate_limit.reset_at).toBe(created.meta.rate_limit.reset_at)
        }
        const denied = await refused(call(), created.meta.rate_limit.reset_at)
        expect(denied.meta.rate_limit.limit).toBe(5)
        expect(denied.error.message).toContain(`5 requests per ${seconds} seconds`)
      })
      const secondBatchDone = Date.now()

      // Once the first three have left the window, exactly three are admitted again: the two from
      // the second batch still count (a fixed window would have freed all five) until t1 + window.
      await sleep(firstBatchDone + window + 50 - Date.now())
      await before(t1 + window, async () => {
        const rolled = []
        for (let i = 0; i < 3; i++) rolled.push(await expectOk(await call()))
        expect(rolled.map((body) => body.meta.rate_limit.remaining)).toEqual([2, 1, 0])
        const secondReset = Date.parse(rolled[0].meta.rate_limit.reset_at)
        expect(secondReset).toBeGreaterThanOrEqual(t1 + window - 5)
        expect(secondReset).toBeLessThanOrEqual(secondBatchDone + window + 5)
        await refused(call(), rolled[0].meta.rate_limit.reset_at)
      })
    })
  })
})

test.describe('running your own sandbox', () => {
  const HINT = 'Running your own sandbox? Start it with `npm run start:local` (the binary: `--local`; any build: SANDBOX_PROFILE=local) to lift this limit.'
  const HOSTED = 'Fair-use limit: 30 requests per 10 minutes per session and per network.'

  /** A forced refusal's message, then a real one's once a fresh session and network spent their 30 calls. */
  async function refusals(client: APIRequestContext) {
    await expectOk(await client.post(API.session))
    // Forced while there is allowance left: once it is spent, the real refusal answers first.
    const forced = (
      await expectError(await client.post(API.search, { data: searchBody(), headers: { 'sandbox-outcome': 'rate_limited' } }), 429, 'rate_limited')
    ).message
    await Promise.all(Array.from({ length: 28 }, async () => expectOk(await client.post(API.search, { data: searchBody() }))))
    const real = (await refused(client.post(API.search, { data: searchBody() }))).error.message
    return { real, forced }
  }

  test('a 429 of a sandbox that kept the hosted defaults says how to lift them; once SANDBOX_RATE_LIMIT is set, even to 30, it does not', async ({
    privateServer,
    newClient,
  }) => {
    const kept = await privateServer('rate-hosted-defaults')
    expect(await refusals(await newClient({ baseURL: kept.url }))).toEqual({
      real: `${HOSTED} ${HINT}`,
      forced: `${HOSTED} ${HINT} (forced by the Sandbox-Outcome header)`,
    })
    expect(listening(kept.stdout()).profile).toContain('hosted (fair-use limit: 30 requests per 10 minutes); --local or SANDBOX_PROFILE=local lifts it')

    const chosen = await privateServer('rate-hosted-chosen', { SANDBOX_RATE_LIMIT: '30' })
    expect(await refusals(await newClient({ baseURL: chosen.url }))).toEqual({ real: HOSTED, forced: `${HOSTED} (forced by the Sandbox-Outcome header)` })
    expect(listening(chosen.stdout()).profile).toBe('hosted (fair-use limit: 30 requests per 10 minutes)')
  })

  for (const [how, env, args] of [
    ['SANDBOX_PROFILE=local', { SANDBOX_PROFILE: 'local' }, []],
    ['--local', {}, ['--local']],
  ] as const) {
    test(`${how}: 40 calls on one session and network are all answered, and the start-up line says local`, async ({ privateServer, newClient }) => {
      const server = await privateServer('rate-local', env, { args: [...args] })
      const client = await newClient({ baseURL: server.url })
      const session = await expectOk(await client.post(API.session))
      expect(session.data.limits.requests).toBe(1_000_000_000)
      const answers = await Promise.all(Array.from({ length: 39 }, async () => expectOk(await client.post(API.search, { data: searchBody() }))))
      expect(Math.min(...answers.map((body) => body.meta.rate_limit.remaining))).toBe(1_000_000_000 - 40)
      expect(listening(server.stdout()).profile).toBe('local (fair-use limit: 1000000000 requests per 10 minutes)')
    })
  }
})

/** The start-up line's fields. */
function listening(stdout: string): Record<string, string> {
  return JSON.parse(stdout.split('\n').find((line) => line.includes('"msg":"listening"'))!)
}
