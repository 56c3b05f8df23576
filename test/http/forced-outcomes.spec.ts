/**
 * `Sandbox-Outcome: <code>`: a call fails as that failure would, on the endpoints where it can
 * happen; it counts against the allowance, changes nothing, and is checked after the rate limit and
 * before the body.
 */
import type { APIRequestContext } from '@playwright/test'
import {
  addDays,
  ages,
  API,
  before,
  expect,
  expectError,
  expectOk,
  issuePolicy,
  raw,
  searchBody,
  sessionCookie,
  sessionToken,
  sleep,
  test,
  tripFrom,
  withTimeSpans,
} from './support/client'

const OUTCOMES = {
  upstream_unavailable: { status: 503, retryAfter: true },
  upstream_invalid: { status: 502, retryAfter: false },
  storage_unavailable: { status: 503, retryAfter: true },
  internal_error: { status: 500, retryAfter: false },
  session_expired: { status: 401, retryAfter: false },
  rate_limited: { status: 429, retryAfter: true },
} as const
type Outcome = keyof typeof OUTCOMES

const ANYWHERE: Outcome[] = ['rate_limited', 'storage_unavailable', 'internal_error']

/** A valid call on each endpoint, and the outcomes it can meet. */
async function endpoints(client: APIRequestContext) {
  const { policy, body, trip } = await issuePolicy(client, { trip: tripFrom(9, 6), travellers: ages(30) })
  return [
    { name: 'session', path: API.session, data: {}, outcomes: ANYWHERE },
    { name: 'search', path: API.search, data: searchBody(trip, ages(30)), outcomes: [...ANYWHERE, 'session_expired', 'upstream_invalid'] },
    { name: 'issue', path: API.issue, data: body, outcomes: [...ANYWHERE, 'session_expired', 'upstream_unavailable', 'upstream_invalid'] },
    {
      name: 'modify',
      path: API.modify(policy.policy_ref),
      data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 2) },
      outcomes: [...ANYWHERE, 'session_expired', 'upstream_unavailable', 'upstream_invalid'],
    },
    { name: 'cancel', path: API.cancel(policy.policy_ref), data: {}, outcomes: [...ANYWHERE, 'session_expired', 'upstream_unavailable', 'upstream_invalid'] },
    { name: 'read', path: API.read(policy.policy_ref), data: {}, outcomes: [...ANYWHERE, 'session_expired'] },
    { name: 'certificate', path: API.certificate(policy.policy_ref), data: {}, outcomes: [...ANYWHERE, 'session_expired'] },
  ] as { name: string; path: string; data: object; outcomes: Outcome[] }[]
}

test.describe('Sandbox-Outcome', () => {
  for (const outcome of Object.keys(OUTCOMES) as Outcome[]) {
    test(`${outcome}: the status, envelope and headers of the real failure, on every endpoint where it can happen`, async ({ newClient }) => {
      const client = await newClient()
      const { status, retryAfter } = OUTCOMES[outcome]
      for (const endpoint of (await endpoints(client)).filter((candidate) => candidate.outcomes.includes(outcome))) {
        const response = await client.post(endpoint.path, { data: endpoint.data, headers: { 'sandbox-outcome': outcome } })
        const error = await expectError(response, status, outcome)
        expect(error.message, endpoint.name).toContain('Sandbox-Outcome')
        const seconds = response.headers()['retry-after']
        if (retryAfter) expect(Number(seconds), `${endpoint.name}: Retry-After`).toBeGreaterThanOrEqual(1)
        else expect(seconds, endpoint.name).toBeUndefined()
        const body = await response.json()
        if (outcome === 'session_expired') {
          // As a real expiry: the cookie is cleared and the answer belongs to no session.
          expect(sessionCookie(response), endpoint.name).toMatch(/^sbx_session=;.*Max-Age=0/)
          expect(body.meta.session_expires_at).toBeNull()
        } else if (endpoint.name !== 'session') {
          expect(body.meta.session_expires_at).not.toBeNull()
        }
      }
    })
  }

  test('rate_limited says when to come back as a real refusal does: Retry-After is the seconds until reset_at', async ({ request }) => {
    await expectOk(await request.post(API.session))
    const response = await request.post(API.search, { data: searchBody(), headers: { 'sandbox-outcome': 'rate_limited' } })
    await expectError(response, 429, 'rate_limited')
    const body = await response.json()
    const untilReset = Math.ceil((Date.parse(body.meta.rate_limit.reset_at) - Date.now()) / 1000)
    expect(Math.abs(Number(response.headers()['retry-after']) - untilReset)).toBeLessThanOrEqual(2)
  })

  test('a forced failure counts against the allowance and changes nothing', async ({ request, newClient }) => {
    const trip = tripFrom(11, 5)
    const { policy, body } = await issuePolicy(request, { trip, partner_reference: 'BK-F1' })
    const before = await expectOk(await request.post(API.read(policy.policy_ref)))
    const forced = (outcome: string, path: string, data: object, headers: Record<string, string> = {}) =>
      request.post(path, { data, headers: { 'sandbox-outcome': outcome, ...headers } })

    let remaining = before.meta.rate_limit.remaining
    const counted = async (answer: Promise<import('@playwright/test').APIResponse>, status: number, code: string) => {
      const response = await answer
      await expectError(response, status, code)
      expect((await response.json()).meta.rate_limit.remaining).toBe(--remaining)
    }
    await counted(
      forced(
        'upstream_unavailable',
        API.modify(policy.policy_ref),
        { scenario: 'correct_partner_reference', partner_reference: 'BK-F2' },
        { 'idempotency-key': 'forced-1' },
      ),
      503,
      'upstream_unavailable',
    )
    await counted(forced('internal_error', API.issue, body, { 'idempotency-key': 'forced-2' }), 500, 'internal_error')
    await counted(forced('storage_unavailable', API.session, {}), 503, 'storage_unavailable')

    // The policy is as it was, no session was opened (the cookie is the same), and the keys are unused.
    const after = await expectOk(await request.post(API.read(policy.policy_ref)))
    expect(after.data).toEqual(before.data)
    expect(after.meta.session_expires_at).toBe(before.meta.session_expires_at)
    const modified = await expectOk(
      await request.post(API.modify(policy.policy_ref), {
        data: { scenario: 'correct_partner_reference', partner_reference: 'BK-F3' },
        headers: { 'idempotency-key': 'forced-1' },
      }),
    )
    expect(modified.data.endorsement.sequence).toBe(1)

    // A search answered by force recorded no plans: its plan_id does not resolve in this session.
    const client = await newClient()
    await expectError(await client.post(API.search, { data: searchBody(trip), headers: { 'sandbox-outcome': 'upstream_invalid' } }), 502, 'upstream_invalid')
    await expectError(await client.post(API.issue, { data: body }), 404, 'plan_not_found')
  })

  test('a forced session_expired ends nothing: the cookie is cleared, but the session still answers to it', async ({ request, newClient }) => {
    const opened = await request.post(API.session)
    const token = sessionToken(opened)!
    const expiresAt = (await expectOk(opened)).data.expires_at
    await expectError(await request.post(API.search, { data: searchBody(), headers: { 'sandbox-outcome': 'session_expired' } }), 401, 'session_expired')
    const client = await newClient()
    const again = await expectOk(await client.post(API.search, { data: searchBody(), headers: { cookie: `sbx_session=${token}` } }))
    expect(again.meta.session_expires_at).toBe(expiresAt)
  })

  test('an unknown value, or one that cannot happen on this endpoint, is validation_failed and is not repeated', async ({ request }) => {
    const unknown = await expectError(
      await request.post(API.search, { data: searchBody(), headers: { 'sandbox-outcome': 'teapot_MARKER' } }),
      422,
      'validation_failed',
    )
    expect(unknown.details).toEqual([
      { field: 'Sandbox-Outcome', issue: 'must be one of: rate_limited, storage_unavailable, internal_error, session_expired, upstream_invalid' },
    ])
    expect(JSON.stringify(unknown)).not.toContain('MARKER')
    // Session creation ignores cookies, so it never answers session_expired; search never answers upstream_unavailable.
    const session = await expectError(await request.post(API.session, { headers: { 'sandbox-outcome': 'session_expired' } }), 422, 'validation_failed')
    expect(session.details).toEqual([{ field: 'Sandbox-Outcome', issue: 'must be one of: rate_limited, storage_unavailable, internal_error' }])
    await expectError(await request.post(API.search, { data: searchBody(), headers: { 'sandbox-outcome': 'upstream_unavailable' } }), 422, 'validation_failed')
    await expectError(await request.post(API.search, { data: searchBody(), headers: { 'sandbox-outcome': '' } }), 422, 'validation_failed')
  })

  test('check order: an expired session and a spent allowance answer first; the body is never read', async ({ privateServer, newClient }) => {
    // 1-second sessions; longer ones only if this machine cannot make three calls within one.
    await withTimeSpans([1, 2, 4, 8], async (seconds) => {
      const server = await privateServer(`forced-order-${seconds}`, { SANDBOX_RATE_LIMIT: '2', SANDBOX_SESSION_TTL_SECONDS: String(seconds) })
      const client = await newClient({ baseURL: server.url })
      // Before the body: broken JSON, a wrong media type, personal data, an oversize body all get the forced answer.
      const opened = await client.post(API.search, {
        headers: { 'content-type': 'application/json', 'sandbox-outcome': 'upstream_invalid' },
        data: raw('{ not json'),
      })
      await expectError(opened, 502, 'upstream_invalid')
      const token = sessionToken(opened)!
      const expiresAt = Date.parse((await opened.json()).meta.session_expires_at)
      await before(expiresAt, async () => {
        await expectError(
          await client.post(API.search, { headers: { 'content-type': 'text/plain', 'sandbox-outcome': 'internal_error' }, data: raw('x'.repeat(20_000)) }),
          500,
          'internal_error',
        )
        // The allowance (2) is spent: the real 429 answers, not the forced failure.
        await expectError(
          await client.post(API.search, { headers: { 'sandbox-outcome': 'internal_error' }, data: { email: 'a@b.example' } }),
          429,
          'rate_limited',
        )
      })
      // Once the session has ended, the real session_expired answers (and counts nothing).
      await sleep(expiresAt - Date.now() + 100)
      const late = await newClient({ baseURL: server.url })
      await expectError(
        await late.post(API.search, { headers: { cookie: `sbx_session=${token}`, 'sandbox-outcome': 'internal_error' }, data: searchBody() }),
        401,
        'session_expired',
      )
    })
  })
})
