import { API, raw, addDays, expect, fails, issuePolicy, ok, searchBody, sessionCookie, sessionToken, sleep, test, tripFrom, uniqueNetwork } from './support/api'

test.describe('session expiry (server with a 2-second session lifetime)', () => {
  test('an expired cookie gets 401 session_expired and is cleared; the next call starts a new session; old references are gone', async ({ launch, newClient }) => {
    const server = await launch('session-expiry', { SANDBOX_SESSION_TTL_SECONDS: '2', SANDBOX_RATE_LIMIT: '4', SANDBOX_SWEEP_INTERVAL_SECONDS: '1' })
    const client = await newClient({ baseURL: server.url })
    const createdResponse = await client.post(API.session)
    const created = await ok(createdResponse)
    expect(created.data.limits).toEqual({ requests: 4, window_minutes: 10, session_minutes: 2 / 60 })
    expect(sessionCookie(createdResponse)).toContain('Max-Age=2')
    expect(Math.abs(Date.parse(created.data.expires_at) - (Date.now() + 2000))).toBeLessThan(1000)
    const token = sessionToken(createdResponse)!
    expect(token).toBeTruthy()

    // Calls 2 to 4: search, issue, modify. The session's allowance is then spent.
    const trip = tripFrom(5, 5)
    const { policy } = await issuePolicy(client, { trip })
    const endorsed = await ok(await client.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 1) } }))
    expect(endorsed.meta.rate_limit.remaining).toBe(0)
    const laterNetwork = uniqueNetwork()
    await fails(await client.post(API.search, { data: searchBody(trip), headers: { 'x-forwarded-for': laterNetwork } }), 429, 'rate_limited')

    await sleep(Date.parse(created.data.expires_at) - Date.now() + 200)

    // The old cookie (the client's jar has dropped it, as a browser would; a partner's client may not).
    const withOldCookie = { cookie: `sbx_session=${token}` }
    const late = await newClient({ baseURL: server.url, network: laterNetwork })
    // Expiry is checked before the rate limit (this session's allowance is spent) and before the body.
    const expired = await late.post(API.modify(policy.policy_ref), { headers: { ...withOldCookie, 'content-type': 'application/json' }, data: raw('{ not json') })
    await fails(expired, 401, 'session_expired')
    const cleared = sessionCookie(expired)
    expect(cleared).toMatch(/^sbx_session=;/)
    expect(cleared).toMatch(/Max-Age=0/)
    expect(cleared).toContain('Path=/')
    expect((await expired.json()).meta.session_expires_at).toBeNull()

    // The next call without the cookie gets a new session.
    const next = await late.post(API.search, { data: searchBody(trip) })
    const nextBody = await ok(next)
    expect(sessionToken(next)).toBeTruthy()
    expect(sessionToken(next)).not.toBe(token)
    expect(nextBody.meta.session_expires_at).not.toBe(created.data.expires_at)
    // Neither the 429 nor the 401 counted against this network.
    expect(nextBody.meta.rate_limit.remaining).toBe(3)
    // The expired session's policy does not resolve from the new session.
    await fails(await late.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 3) } }), 404, 'policy_not_found')

    // Still a precise session_expired once the sweep has run (it runs every second here).
    await sleep(Date.parse(created.data.expires_at) + 1_300 - Date.now())
    const afterSweep = await newClient({ baseURL: server.url })
    await fails(await afterSweep.post(API.search, { headers: withOldCookie, data: searchBody(trip) }), 401, 'session_expired')
    // Explicit creation ignores the expired cookie and starts afresh.
    const recreatedResponse = await afterSweep.post(API.session, { headers: withOldCookie })
    const recreated = await ok(recreatedResponse)
    expect(recreated.data.session_ref).not.toBe(created.data.session_ref)
    expect(sessionToken(recreatedResponse)).not.toBe(token)
  })
})
