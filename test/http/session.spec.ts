import { addDays, API, expect, expectError, expectOk, ISO_UTC, issuePolicy, searchBody, sessionCookie, sessionToken, test } from './support/client'

test.describe('POST /api/sandbox/session', () => {
  test('creates a session, sets the HttpOnly cookie and reports the limits', async ({ request }) => {
    const response = await request.post('/api/sandbox/session')
    expect(response.status()).toBe(200)
    const body = await expectOk(response)
    expect(body.ok).toBe(true)
    expect(body.data.session_ref).toMatch(/^sbx_[0-9a-f]{20}$/)
    expect(body.data.limits).toEqual({ requests: 30, window_minutes: 10, session_minutes: 60 })
    expect(body.meta.session_expires_at).toBe(body.data.expires_at)
    const cookie = response.headers()['set-cookie']
    expect(cookie).toMatch(/^sbx_session=[A-Za-z0-9_-]{43};/)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    expect(cookie).toContain('Path=/')
    expect(cookie).toContain('Max-Age=90000') // the hour, and the day its ended session answers session_expired
    expect(cookie).not.toContain(body.data.session_ref)
  })
})

test.describe('sessions', () => {
  test('explicit creation ignores any cookie and always makes a new session', async ({ request }) => {
    const first = await request.post(API.session)
    const one = await expectOk(first)
    const firstToken = sessionToken(first)
    // The client now presents the first cookie; explicit creation must still start afresh.
    const second = await request.post(API.session, { data: {} })
    const two = await expectOk(second)
    expect(two.data.session_ref).toMatch(/^sbx_\w+$/)
    expect(two.data.session_ref).not.toBe(one.data.session_ref)
    const secondToken = sessionToken(second)
    expect(secondToken).toBeDefined()
    expect(secondToken).not.toBe(firstToken)
    // A forged cookie changes nothing either.
    const third = await expectOk(await request.post(API.session, { headers: { cookie: 'sbx_session=forged-token' } }))
    expect(new Set([one.data.session_ref, two.data.session_ref, third.data.session_ref]).size).toBe(3)
    for (const body of [one, two, third]) {
      expect(body.data.expires_at).toMatch(ISO_UTC)
      expect(body.meta.session_expires_at).toBe(body.data.expires_at)
      expect(Math.abs(Date.parse(body.data.expires_at) - (Date.now() + 3_600_000))).toBeLessThan(60_000)
    }
  })

  test('the first search creates the session implicitly and sets the cookie; later calls reuse it', async ({ request }) => {
    const first = await request.post(API.search, { data: searchBody() })
    const body = await expectOk(first)
    const cookie = sessionCookie(first)
    expect(cookie).toMatch(/^sbx_session=[A-Za-z0-9_-]{22,};/)
    expect(cookie).toContain('HttpOnly')
    expect(cookie).toContain('SameSite=Strict')
    expect(cookie).toContain('Max-Age=90000') // the hour, and the day its ended session answers session_expired
    expect(cookie).not.toContain('Secure')
    expect(Math.abs(Date.parse(body.meta.session_expires_at) - (Date.now() + 3_600_000))).toBeLessThan(60_000)

    const again = await request.post(API.search, { data: searchBody() })
    const next = await expectOk(again)
    expect(sessionCookie(again)).toBeUndefined()
    // Lifetime is fixed at creation: no sliding.
    expect(next.meta.session_expires_at).toBe(body.meta.session_expires_at)
    // Both calls were counted against the same session.
    expect(next.meta.rate_limit.remaining).toBe(body.meta.rate_limit.remaining - 1)
  })

  test('an unknown or forged cookie is treated as no cookie: a new session is created', async ({ request }) => {
    const response = await request.post(API.search, { data: searchBody(), headers: { cookie: 'sbx_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } })
    await expectOk(response)
    expect(sessionToken(response)).toMatch(/^[A-Za-z0-9_-]{22,}$/)
    expect(sessionToken(response)).not.toBe('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
  })

  test('the cookie is Secure when a trusted proxy says the request arrived over HTTPS', async ({ request }) => {
    const response = await request.post(API.session, { headers: { 'x-forwarded-proto': 'https' } })
    await expectOk(response)
    expect(sessionCookie(response)).toMatch(/;\s*Secure/i)
  })

  test('explicit creation takes no fields', async ({ request }) => {
    const error = await expectError(await request.post(API.session, { data: { ttl: 5 } }), 422, 'validation_failed')
    expect(error.details).toEqual([{ field: 'ttl', issue: expect.any(String) }])
  })

  test('a failed explicit creation keeps the session and cookie the caller had, and counts like any call', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    const before = await expectOk(await request.post(API.search, { data: searchBody() }))
    for (const [body, status, code] of [
      [{ x: 1 }, 422, 'validation_failed'],
      ['{', 400, 'invalid_json'],
      [{ email: 'a@b.example' }, 422, 'pii_not_allowed'],
    ] as const) {
      const refused = await request.post(
        API.session,
        typeof body === 'string' ? { data: Buffer.from(body), headers: { 'content-type': 'application/json' } } : { data: body },
      )
      await expectError(refused, status, code)
      expect(sessionCookie(refused), `no new cookie for a ${code}`).toBeUndefined()
    }
    // The earlier session still resolves its policy; the three refusals were counted against the network.
    const moved = await expectOk(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 2) } }),
    )
    expect(moved.meta.session_expires_at).toBe(before.meta.session_expires_at)
    expect(moved.meta.rate_limit.remaining).toBe(before.meta.rate_limit.remaining - 4)
  })

  test('references belong to the session that created them', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    const move = { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 2) }
    // A new explicit session replaces the cookie: the old policy is not resolvable from it.
    await expectOk(await request.post(API.session))
    await expectError(await request.post(API.modify(policy.policy_ref), { data: move }), 404, 'policy_not_found')
  })
})

test.describe('short sessions (lifetime_minutes)', () => {
  test('a session of 1 to 60 minutes: expires_at, limits.session_minutes, meta and the cookie all say so', async ({ request }) => {
    for (const minutes of [1, 7, 60]) {
      const response = await request.post(API.session, { data: { lifetime_minutes: minutes } })
      const body = await expectOk(response)
      expect(body.data.limits).toEqual({ requests: 30, window_minutes: 10, session_minutes: minutes })
      expect(Math.abs(Date.parse(body.data.expires_at) - (Date.now() + minutes * 60_000))).toBeLessThan(5_000)
      expect(body.meta.session_expires_at).toBe(body.data.expires_at)
      expect(sessionCookie(response)).toContain(`Max-Age=${minutes * 60 + 86_400}`)
      // The calls that follow run in it.
      expect((await expectOk(await request.post(API.search, { data: searchBody() }))).meta.session_expires_at).toBe(body.data.expires_at)
    }
  })

  test('never longer than the server runs sessions: 5 minutes on a 30-second server is 30 seconds', async ({ privateServer, newClient }) => {
    const server = await privateServer('short-session-cap', { SANDBOX_SESSION_TTL_SECONDS: '30' })
    const client = await newClient({ baseURL: server.url })
    const response = await client.post(API.session, { data: { lifetime_minutes: 5 } })
    const body = await expectOk(response)
    expect(body.data.limits.session_minutes).toBe(0.5)
    expect(sessionCookie(response)).toContain('Max-Age=86430')
  })

  test('anything but a whole number from 1 to 60 is validation_failed, never repeated, and the caller keeps its session', async ({ request }) => {
    const kept = await expectOk(await request.post(API.session))
    for (const value of [0, 61, 1.5, '5', null, -3]) {
      const response = await request.post(API.session, { data: { lifetime_minutes: value } })
      const error = await expectError(response, 422, 'validation_failed')
      expect(error.details).toEqual([{ field: 'lifetime_minutes', issue: 'must be a whole number of minutes from 1 to 60' }])
      expect(sessionCookie(response)).toBeUndefined()
    }
    const error = await expectError(await request.post(API.session, { data: { lifetime_minutes: 5, ttl: 5 } }), 422, 'validation_failed')
    expect(error.details).toEqual([{ field: 'ttl', issue: 'is not an accepted field' }])
    expect((await expectOk(await request.post(API.search, { data: searchBody() }))).meta.session_expires_at).toBe(kept.data.expires_at)
  })
})
