import {
  addDays,
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
  uniqueNetwork,
  withTimeSpans,
} from './support/client'

test.describe('session expiry (server with a session lifetime of seconds)', () => {
  test('a client that honours cookies gets 401 session_expired and the cookie cleared; its next call starts a new session; old references are gone', async ({
    privateServer,
    newClient,
  }) => {
    test.setTimeout(60_000)
    // 2-second sessions; longer ones only if this machine cannot make four calls in the session's lifetime.
    await withTimeSpans([2, 4, 8], async (seconds) => {
      const server = await privateServer(`session-expiry-${seconds}`, {
        SANDBOX_SESSION_TTL_SECONDS: String(seconds),
        SANDBOX_RATE_LIMIT: '4',
        SANDBOX_SWEEP_INTERVAL_SECONDS: '1',
      })
      // Playwright's request context keeps cookies and honours Max-Age, as browsers and curl's jar do.
      const client = await newClient({ baseURL: server.url })
      const createdResponse = await client.post(API.session)
      const created = await expectOk(createdResponse)
      const expiresAt = Date.parse(created.data.expires_at)
      expect(created.data.limits).toEqual({ requests: 4, window_minutes: 10, session_minutes: seconds / 60 })
      // The cookie outlives the session by the day in which the ended session is still recognised.
      expect(sessionCookie(createdResponse)).toContain(`Max-Age=${seconds + 86_400}`)
      const token = sessionToken(createdResponse)!
      expect(token).toBeTruthy()

      // Calls 2 to 4: search, issue, modify. The session's allowance is then spent.
      const trip = tripFrom(5, 5)
      const laterNetwork = { 'x-forwarded-for': uniqueNetwork() }
      const { policy } = await before(expiresAt, async () => {
        const issued = await issuePolicy(client, { trip })
        const endorsed = await expectOk(
          await client.post(API.modify(issued.policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 1) } }),
        )
        expect(endorsed.meta.rate_limit.remaining).toBe(0)
        await expectError(await client.post(API.search, { data: searchBody(trip), headers: laterNetwork }), 429, 'rate_limited')
        return issued
      })

      // Past the end the server itself reported (one clock: the server runs on this machine).
      await sleep(expiresAt - Date.now() + 100)

      // The jar still holds the cookie and sends it. Expiry is checked before the rate limit (this
      // session's allowance is spent) and before the body.
      const expired = await client.post(API.modify(policy.policy_ref), {
        headers: { ...laterNetwork, 'content-type': 'application/json' },
        data: raw('{ not json'),
      })
      await expectError(expired, 401, 'session_expired')
      const cleared = sessionCookie(expired)
      expect(cleared).toMatch(/^sbx_session=;/)
      expect(cleared).toMatch(/Max-Age=0/)
      expect(cleared).toContain('Path=/')
      expect((await expired.json()).meta.session_expires_at).toBeNull()

      // The jar dropped the cleared cookie: the next call starts a new session.
      const next = await client.post(API.search, { data: searchBody(trip), headers: laterNetwork })
      const nextBody = await expectOk(next)
      expect(sessionToken(next)).toBeTruthy()
      expect(sessionToken(next)).not.toBe(token)
      expect(nextBody.meta.session_expires_at).not.toBe(created.data.expires_at)
      // Neither the 429 nor the 401 counted against this network.
      expect(nextBody.meta.rate_limit.remaining).toBe(3)
      // The expired session's policy does not resolve from the new session.
      await expectError(
        await client.post(API.modify(policy.policy_ref), {
          data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 3) },
          headers: laterNetwork,
        }),
        404,
        'policy_not_found',
      )

      // Still a precise session_expired once the sweep has deleted the session's data (it logs that).
      await expect.poll(() => /"msg":"sweep"[^\n]*"sessionsPurged":[1-9]/.test(server.stdout()), { timeout: 15_000 }).toBe(true)
      const withOldCookie = { cookie: `sbx_session=${token}` }
      const afterSweep = await newClient({ baseURL: server.url })
      await expectError(await afterSweep.post(API.search, { headers: withOldCookie, data: searchBody(trip) }), 401, 'session_expired')
      // Explicit creation ignores the expired cookie and starts afresh.
      const recreatedResponse = await afterSweep.post(API.session, { headers: withOldCookie })
      const recreated = await expectOk(recreatedResponse)
      expect(recreated.data.session_ref).not.toBe(created.data.session_ref)
      expect(sessionToken(recreatedResponse)).not.toBe(token)
    })
  })
})
