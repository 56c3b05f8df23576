/**
 * The request log and the policies list (issue 35), on every target: each call of a session is
 * listed with what it sent and what it was answered; one is found by its request_id, a foreign one
 * is not; a body refused as personal data leaves no value anywhere in the database; the bound holds;
 * the log survives a restart and goes with its session.
 */
import { API, ages, call, expect, expectError, expectOk, issuePolicy, searchBody, test, tripFrom, uniqueNetwork } from './support/client'
import { queryStore } from './support/store'

const LOG = '/api/sandbox/requests'
const entry = (requestId: string) => `${LOG}/${requestId}`

type Client = Parameters<typeof issuePolicy>[0]

/** The session's calls, newest first; the one just answered may take a moment to be written. */
async function calls(client: Client, body: object = {}) {
  return (await expectOk(await client.post(LOG, { data: body }))).data.calls as any[]
}

test.describe('the request log', () => {
  test('each call is listed newest first with its status, error code, testing headers, body and answer', async ({ request }) => {
    const searched = await request.post(API.search, { data: searchBody(tripFrom(9, 4), ages(35)), headers: { 'sandbox-delay-ms': '5' } })
    const ok = await expectOk(searched)
    const invalid = await request.post(API.search, { data: searchBody(tripFrom(9, 4), ages(300)) })
    const invalidError = await expectError(invalid, 422, 'validation_failed')
    const forced = await request.post(API.search, { data: searchBody(), headers: { 'sandbox-outcome': 'internal_error' } })
    await expectError(forced, 500, 'internal_error')
    await expect.poll(async () => (await calls(request)).length).toBe(3)

    const [last, middle, first] = await calls(request)
    expect(first).toMatchObject({
      request_id: ok.request_id,
      method: 'POST',
      path: API.search,
      status: 200,
      error_code: null,
      testing: { idempotency_key: null, sandbox_outcome: null, sandbox_delay_ms: 5 },
      request: { body: searchBody(tripFrom(9, 4), ages(35)), note: null },
      answer: { body: ok, truncated: false },
    })
    expect(first.duration_ms).toBeGreaterThanOrEqual(5)
    expect(middle).toMatchObject({ status: 422, error_code: 'validation_failed', answer: { body: { error: invalidError } } })
    expect(last).toMatchObject({ status: 500, error_code: 'internal_error', testing: { sandbox_outcome: 'internal_error' } })

    // Filters: failed only, and one call by its id; reading the log is not itself logged.
    expect((await calls(request, { failed: true })).map((call) => call.status)).toEqual([500, 422])
    expect((await expectOk(await request.post(entry(ok.request_id)))).data.request_id).toBe(ok.request_id)
    expect(await calls(request)).toHaveLength(3)
  })

  test("another session's call is not found, as every foreign reference; a malformed id neither", async ({ request, newClient }) => {
    const mine = await expectOk(await request.post(API.search, { data: searchBody() }))
    const other = await newClient()
    await expectError(await other.post(entry(mine.request_id)), 404, 'request_not_found')
    await expectError(await other.post(entry('not-an-id')), 404, 'request_not_found')
    await expect.poll(async () => (await calls(request)).length).toBe(1)
  })

  test('a body refused as personal data leaves no value in the database: only its field paths', async ({ privateServer }) => {
    const server = await privateServer('log-pii')
    const network = uniqueNetwork()
    const opened = await call(server.url, API.session, { network })
    const cookie = opened.token!
    const secret = 'jane.doe.4711@example.com'
    const refused = await call(server.url, API.search, { network, cookie, body: { ...searchBody(), travellers: [{ age: 30, email: secret }] } })
    await expectError(refused, 422, 'pii_not_allowed')
    // Logged once its answer has gone: a moment later, so the read may come first.
    const logged = async () => (await expectOk(await call(server.url, LOG, { network, cookie, body: {} }))).data.calls as any[]
    await expect.poll(async () => (await logged()).length).toBe(2)
    const listed = { data: { calls: await logged() } }
    expect(listed.data.calls[0].request).toEqual({ content_type: 'application/json', body: null, note: expect.stringContaining('travellers[0].email') })
    const rows = await queryStore<{ entry: string }>(server.dbPath, 'SELECT entry FROM request_log')
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.map((row) => row.entry).join('\n')).not.toContain(secret)
    expect(rows.map((row) => row.entry).join('\n')).not.toContain('jane.doe')
  })

  test('a 429 answered to the session is logged, and an Idempotency-Key as sent or replayed, never its value', async ({ privateServer }) => {
    const server = await privateServer('log-limits', { SANDBOX_RATE_LIMIT: '5' })
    const network = uniqueNetwork()
    const opened = await call(server.url, API.session, { network })
    const cookie = opened.token!
    const trip = tripFrom(9, 4)
    const plan = (await expectOk(await call(server.url, API.search, { network, cookie, body: searchBody(trip, ages(35)) }))).data.plans[0]
    const key = 'booking-secret-77'
    const issue = { network, cookie, body: { plan_id: plan.plan_id, trip, travellers: ages(35) }, headers: { 'idempotency-key': key } }
    const issued = await expectOk(await call(server.url, API.issue, issue))
    await expectOk(await call(server.url, API.issue, issue))
    let refused: Awaited<ReturnType<typeof call>> | undefined
    const POLICIES = '/api/sandbox/policies' // logged (reading the log itself is not)
    for (let attempt = 0; attempt < 5 && refused?.status !== 429; attempt++) refused = await call(server.url, POLICIES, { network, cookie, body: {} })
    const limited = await expectError(refused!, 429, 'rate_limited')

    // The session's allowance is spent: its console still reads the log (it has an allowance of its own).
    const consoleCalls = async () => (await call(opened.json.data.console_url, '/data', { method: 'GET', network })).json.calls as any[]
    await expect.poll(async () => (await consoleCalls()).some((logged) => logged.status === 429)).toBe(true)
    const logged = await consoleCalls()
    expect(logged[0]).toMatchObject({ path: POLICIES, status: 429, error_code: 'rate_limited', answer: { body: { error: limited } } })
    const issues = logged.filter((entry) => entry.path === API.issue).reverse()
    expect(issues.map((entry) => entry.testing.idempotency_key)).toEqual(['sent', 'replayed'])
    expect(issues.map((entry) => entry.answer.body.data.policy_ref)).toEqual([issued.data.policy_ref, issued.data.policy_ref])
    const stored = await queryStore<{ entry: string }>(server.dbPath, 'SELECT entry FROM request_log')
    expect(stored.map((row) => row.entry).join('\n')).not.toContain(key)
    expect(JSON.stringify(logged)).not.toContain(key)
  })

  test('the newest 200 calls are kept, and survive a restart', async ({ privateServer }) => {
    test.setTimeout(120_000)
    const server = await privateServer('log-bound', { SANDBOX_RATE_LIMIT: '1000000' })
    const network = uniqueNetwork()
    const cookie = (await call(server.url, API.session, { network })).token!
    let last = ''
    for (let index = 0; index < 205; index++) {
      last = (await call(server.url, '/api/sandbox/test_helpers/clock', { network, cookie })).headers.get('x-request-id')!
    }
    const listed = async (url: string) => (await expectOk(await call(url, LOG, { network, cookie, body: { limit: 100 } }))).data
    await expect.poll(async () => (await listed(server.url)).calls[0].request_id).toBe(last) // logged a moment after its answer
    const page = await listed(server.url)
    expect(page.calls).toHaveLength(100)
    const rest = await expectOk(await call(server.url, LOG, { network, cookie, body: { limit: 100, cursor: page.next_cursor } }))
    expect(rest.data.calls).toHaveLength(100)
    expect(rest.data.next_cursor).toBeNull()

    expect(await server.stop('SIGTERM')).toBe(0)
    const again = await privateServer('log-bound', { SANDBOX_RATE_LIMIT: '1000000' }, { dbPath: server.dbPath })
    expect((await listed(again.url)).calls.map((row: any) => row.request_id)).toEqual(page.calls.map((row: any) => row.request_id))
  })

  test('the log goes with its session: swept once it ended', async ({ privateServer }) => {
    const server = await privateServer('log-sweep', { SANDBOX_SESSION_TTL_SECONDS: '2', SANDBOX_SWEEP_INTERVAL_SECONDS: '1' })
    const network = uniqueNetwork()
    const cookie = (await call(server.url, API.session, { network })).token!
    await expectOk(await call(server.url, API.search, { network, cookie, body: searchBody() }))
    const count = async () => (await queryStore<{ n: number }>(server.dbPath, 'SELECT COUNT(*) AS n FROM request_log'))[0]!.n
    // Reading the log writes it (on the embedded file it otherwise waits a few seconds).
    await expect.poll(async () => (await expectOk(await call(server.url, LOG, { network, cookie, body: {} }))).data.calls.length).toBe(2)
    await expect.poll(count, { timeout: 10_000 }).toBe(2)
    await expect.poll(count, { timeout: 20_000, intervals: [500] }).toBe(0)
  })
})

test.describe('the policies list', () => {
  test('every policy of the session, newest first, with status, cover, premium and refund, paged by a cursor', async ({ request }) => {
    const first = await issuePolicy(request, { trip: tripFrom(10, 3) })
    const second = await issuePolicy(request, { trip: tripFrom(12, 3) })
    await expectOk(await request.post(API.cancel(first.policy.policy_ref)))
    const page = (await expectOk(await request.post('/api/sandbox/policies', { data: { limit: 1 } }))).data
    expect(page.policies.map((policy: any) => policy.policy_ref)).toEqual([second.policy.policy_ref])
    expect(page.policies[0]).toMatchObject({ status: 'issued', coverage: 'upcoming', premium: second.policy.premium })
    const older = (await expectOk(await request.post('/api/sandbox/policies', { data: { limit: 1, cursor: page.next_cursor } }))).data
    expect(older.policies[0]).toMatchObject({
      policy_ref: first.policy.policy_ref,
      status: 'cancelled',
      cancellation: { refund: { rule: 'full_before_start' } },
    })
    expect(older.next_cursor).toBeNull()
  })
})
