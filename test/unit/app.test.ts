/**
 * A few in-process checks of the whole app where a controllable clock matters: session expiry to
 * the millisecond, the rolling window, and a full issue → modify flow. The HTTP suite covers the
 * rest over a real socket.
 */
import { describe, expect, test } from 'bun:test'
import { START_MS, inProcessApp, tripFrom, expectFailure } from './support/app'

const MINUTE = 60_000
const iso = (ms: number) => new Date(ms).toISOString()

describe('session expiry (fake clock)', () => {
  test('a session resolves until its expiry instant and is session_expired from then on', async () => {
    const sandbox = await inProcessApp()
    const created = await sandbox.call('session')
    expect(created.status).toBe(200)
    const token = created.cookie!
    expect(created.body.data.expires_at).toBe(iso(START_MS + 60 * MINUTE))
    const search = { trip: tripFrom(START_MS, 1, 5), travellers: [{ age: 30 }] }

    sandbox.setNow(START_MS + 60 * MINUTE - 1)
    const lastMoment = await sandbox.call('plans/search', search, { cookie: token })
    expect(lastMoment.status).toBe(200)
    expect(lastMoment.body.meta.session_expires_at).toBe(created.body.data.expires_at)
    expect(lastMoment.cookie).toBeUndefined() // no new session was started
    const remainingBefore = lastMoment.body.meta.rate_limit.remaining

    sandbox.setNow(START_MS + 60 * MINUTE)
    const expired = await sandbox.call('plans/search', search, { cookie: token })
    expect(expired.status).toBe(401)
    expect(expired.body.ok).toBe(false)
    expect(expired.body.error.code).toBe('session_expired')
    expect(expired.body.data).toBeUndefined()
    expect(expired.cookie).toBe('') // the cookie is cleared
    expect(expired.headers.getSetCookie().join()).toMatch(/Max-Age=0/i)
    // Refused before the rate check: it counts against nothing.
    expect(expired.body.meta.rate_limit.remaining).toBe(remainingBefore)

    // The next call without the cookie starts a new session.
    const fresh = await sandbox.call('plans/search', search)
    expect(fresh.status).toBe(200)
    expect(fresh.cookie).toBeTruthy()
    expect(fresh.cookie).not.toBe(token)
    expect(fresh.body.meta.session_expires_at).toBe(iso(START_MS + 120 * MINUTE))
  })

  test("an expired session's policy stops resolving at once, and the sweep keeps the answer precise for 24 h", async () => {
    const sandbox = await inProcessApp()
    const trip = tripFrom(START_MS, 2, 6)
    const travellers = [{ age: 41 }]
    const search = await sandbox.call('plans/search', { trip, travellers })
    const token = search.cookie!
    const issued = await sandbox.call('policy/new', { plan_id: search.body.data.plans[0].plan_id, trip, travellers }, { cookie: token })
    expect(issued.status).toBe(200)
    const modify = `policy/${issued.body.data.policy_ref}/modify`
    const body = { scenario: 'correct_partner_reference', partner_reference: 'BK-77' }

    sandbox.setNow(START_MS + 60 * MINUTE) // no sweep has run
    expect((await sandbox.call(modify, body, { cookie: token })).body.error.code).toBe('session_expired')

    await sandbox.services.storage.sweep(sandbox.now())
    sandbox.setNow(START_MS + 60 * MINUTE + 23 * 60 * MINUTE)
    expect((await sandbox.call(modify, body, { cookie: token })).body.error.code).toBe('session_expired')

    // After 24 hours the token is forgotten: it is treated as no cookie, a new session begins,
    // and the old policy is not in it.
    sandbox.setNow(START_MS + 60 * MINUTE + 24 * 60 * MINUTE)
    await sandbox.services.storage.sweep(sandbox.now())
    const late = await sandbox.call(modify, body, { cookie: token })
    expectFailure(late, 404, 'policy_not_found')
    expect(late.cookie).toBeTruthy()
  })

  test('a session asked to last one minute ends at that minute, to the millisecond', async () => {
    const sandbox = await inProcessApp()
    const created = await sandbox.call('session', { lifetime_minutes: 1 })
    expect(created.body.data.expires_at).toBe(iso(START_MS + MINUTE))
    expect(created.body.data.limits.session_minutes).toBe(1)
    const search = { trip: tripFrom(START_MS, 1, 5), travellers: [{ age: 30 }] }
    sandbox.setNow(START_MS + MINUTE - 1)
    expect((await sandbox.call('plans/search', search, { cookie: created.cookie })).status).toBe(200)
    sandbox.setNow(START_MS + MINUTE)
    const ended = await sandbox.call('plans/search', search, { cookie: created.cookie })
    expect(ended.body.error.code).toBe('session_expired')
    expect(ended.cookie).toBe('')
  })
})

describe('rolling rate window (fake clock)', () => {
  test('admits 30 in 10 minutes, then again exactly when the oldest hit leaves the window', async () => {
    const sandbox = await inProcessApp()
    let token: string | undefined
    for (let i = 0; i < 30; i++) {
      sandbox.setNow(START_MS + i * 1000)
      const response = await sandbox.call('plans/search', { trip: tripFrom(START_MS, 1, 3), travellers: [{ age: 20 }] }, token ? { cookie: token } : {})
      expect(response.status).toBe(200)
      token ??= response.cookie
      expect(response.body.meta.rate_limit).toEqual({ limit: 30, remaining: 29 - i, reset_at: iso(START_MS + 10 * MINUTE) })
    }
    const search = { trip: tripFrom(START_MS, 1, 3), travellers: [{ age: 20 }] }

    sandbox.setNow(START_MS + 30_000)
    const refused = await sandbox.call('plans/search', search, { cookie: token })
    expectFailure(refused, 429, 'rate_limited')
    expect(refused.headers.get('retry-after')).toBe('570')
    expect(refused.body.meta.rate_limit).toEqual({ limit: 30, remaining: 0, reset_at: iso(START_MS + 10 * MINUTE) })
    expect(refused.headers.get('ratelimit')).toBe('"sandbox";r=0;t=570')
    expect(refused.headers.get('ratelimit-policy')).toBe('"sandbox";q=30;w=600')

    sandbox.setNow(START_MS + 10 * MINUTE - 1)
    const stillRefused = await sandbox.call('plans/search', search, { cookie: token })
    expect(stillRefused.status).toBe(429)
    expect(stillRefused.headers.get('retry-after')).toBe('1')

    sandbox.setNow(START_MS + 10 * MINUTE)
    const again = await sandbox.call('plans/search', search, { cookie: token })
    expect(again.status).toBe(200)
    // The hit at START_MS left; the next to leave is the one at START_MS + 1 s.
    expect(again.body.meta.rate_limit).toEqual({ limit: 30, remaining: 0, reset_at: iso(START_MS + 1000 + 10 * MINUTE) })

    expect((await sandbox.call('plans/search', search, { cookie: token })).status).toBe(429)
    sandbox.setNow(START_MS + 1000 + 10 * MINUTE)
    expect((await sandbox.call('plans/search', search, { cookie: token })).status).toBe(200)
  })

  test('a refused call without a cookie creates no session', async () => {
    const sandbox = await inProcessApp({ SANDBOX_RATE_LIMIT: '2' })
    expect((await sandbox.call('session')).status).toBe(200)
    expect((await sandbox.call('session')).status).toBe(200)
    const sessions = async () => {
      await sandbox.services.storage.flush() // sessions are written behind
      return sandbox.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM sessions').get()!.n
    }
    expect(await sessions()).toBe(2)

    const refused = await sandbox.call('session')
    expect(refused.status).toBe(429)
    expect(refused.cookie).toBeUndefined()
    expect(refused.body.meta.session_expires_at).toBeNull()
    expect(refused.body.meta.rate_limit.remaining).toBe(0)
    expect(await sessions()).toBe(2)
  })
})

describe('issue → modify flow', () => {
  test('search, issue, extend, correct the reference, replay; other sessions see nothing', async () => {
    const sandbox = await inProcessApp()
    const trip = tripFrom(START_MS, 10, 9, 'IN', 'TH')
    const search = await sandbox.call('plans/search', { trip, travellers: [{ age: 35 }, { age: 8 }], currency: 'USD' })
    expect(search.status).toBe(200)
    const token = search.cookie!
    expect(search.body.data.currency).toBe('USD')
    expect(search.body.data.travellers).toBe(2)
    const plan = search.body.data.plans.find((p: { tier: string }) => p.tier === 'standard')

    // Same ages in another order are the same travellers (a multiset).
    const issueBody = { plan_id: plan.plan_id, trip, travellers: [{ age: 8 }, { age: 35 }], partner_reference: 'BK-1' }
    const issued = await sandbox.call('policy/new', issueBody, { cookie: token, headers: { 'idempotency-key': 'issue-1' } })
    expect(issued.status).toBe(200)
    const policy = issued.body.data
    expect(policy).toMatchObject({
      status: 'issued',
      plan_id: plan.plan_id,
      partner_reference: 'BK-1',
      travellers_count: 2,
      documents: [{ type: 'policy_certificate', state: 'ready', format: 'pdf' }],
      premium: plan.premium,
      currency: 'USD',
    })
    expect(policy.policy_ref).toMatch(/^pol_sbx_[0-9a-f]+$/)
    expect(policy.svc_insurance_id).toMatch(/^svc_sbx_[0-9a-f]+$/)
    expect(policy.traveller_identity).toMatch(/synthetic/i)

    // A replay with the same key and body answers the same policy.
    const replay = await sandbox.call('policy/new', issueBody, { cookie: token, headers: { 'idempotency-key': 'issue-1' } })
    expect(replay.body.data.policy_ref).toBe(policy.policy_ref)
    const reused = await sandbox.call('policy/new', { ...issueBody, partner_reference: 'BK-2' }, { cookie: token, headers: { 'idempotency-key': 'issue-1' } })
    expect(reused.body.error.code).toBe('idempotency_key_reused')

    const modify = `policy/${policy.policy_ref}/modify`
    const newEnd = tripFrom(START_MS, 10, 20).end_date
    const extended = await sandbox.call(modify, { scenario: 'extend_end_date', new_end_date: newEnd }, { cookie: token })
    expect(extended.status).toBe(200)
    expect(extended.body.data).toMatchObject({ policy_ref: policy.policy_ref, status: 'endorsed', trip: { end_date: newEnd } })
    expect(extended.body.data.premium).toBeGreaterThan(policy.premium)

    // An endorsed policy can be endorsed again and stays endorsed.
    const corrected = await sandbox.call(modify, { scenario: 'correct_partner_reference', partner_reference: 'BK-9' }, { cookie: token })
    expect(corrected.status).toBe(200)
    expect(corrected.body.data).toMatchObject({ status: 'endorsed', partner_reference: 'BK-9' })
    expect(corrected.body.data.endorsement.sequence).toBe(2)

    // Extending again past 180 days from the start is trip_too_long.
    const tooLong = await sandbox.call(modify, { scenario: 'extend_end_date', new_end_date: tripFrom(START_MS, 10, 181).end_date }, { cookie: token })
    expectFailure(tooLong, 422, 'trip_too_long')

    // Another session cannot see the policy or issue against the plan.
    const other = (await sandbox.call('session')).cookie!
    const foreign = await sandbox.call(modify, { scenario: 'correct_partner_reference', partner_reference: 'BK-X' }, { cookie: other })
    expectFailure(foreign, 404, 'policy_not_found')
    const unknown = await sandbox.call(
      'policy/pol_sbx_00000000000000000000/modify',
      { scenario: 'correct_partner_reference', partner_reference: 'BK-X' },
      { cookie: other },
    )
    expect(unknown.body.error).toEqual(foreign.body.error)
    const foreignPlan = await sandbox.call('policy/new', issueBody, { cookie: other })
    expectFailure(foreignPlan, 404, 'plan_not_found')
  })

  test('issue refuses personal data, naming paths and never values, and stores nothing', async () => {
    const sandbox = await inProcessApp()
    const trip = tripFrom(START_MS, 3, 4)
    const search = await sandbox.call('plans/search', { trip, travellers: [{ age: 30 }] })
    const token = search.cookie!
    const response = await sandbox.call(
      'policy/new',
      { plan_id: search.body.data.plans[0].plan_id, trip, travellers: [{ age: 30, firstName: 'Asha' }], partner_reference: 'asha@example.com' },
      { cookie: token },
    )
    expectFailure(response, 422, 'pii_not_allowed')
    expect(response.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['partner_reference', 'travellers[0].firstName'])
    expect(JSON.stringify(response.body)).not.toContain('Asha')
    expect(JSON.stringify(response.body)).not.toContain('asha@example.com')
    expect(sandbox.logs.join('\n')).not.toContain('asha@example.com')
    expect(sandbox.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM policies').get()!.n).toBe(0)
  })
})

describe('request checks in the app', () => {
  test('a modify body without a scenario is validation_failed naming scenario, and changes nothing', async () => {
    const sandbox = await inProcessApp()
    const trip = tripFrom(START_MS, 1, 3, 'IN', 'TH')
    const search = await sandbox.call('plans/search', { trip, travellers: [{ age: 20 }] })
    const token = search.cookie!
    const issued = await sandbox.call('policy/new', { plan_id: search.body.data.plans[0].plan_id, trip, travellers: [{ age: 20 }] }, { cookie: token })
    const modify = `policy/${issued.body.data.policy_ref}/modify`

    const empty = await sandbox.call(modify, {}, { cookie: token })
    expectFailure(empty, 422, 'validation_failed')
    expect(empty.body.error.details.map((d: { field: string }) => d.field)).toEqual(['scenario'])

    // Spec 4.4: scenario is required. A bare new_end_date must not be taken for an extension.
    const noScenario = await sandbox.call(modify, { new_end_date: tripFrom(START_MS, 1, 5).end_date }, { cookie: token })
    expectFailure(noScenario, 422, 'validation_failed')
    expect(noScenario.body.error.details.map((d: { field: string }) => d.field)).toContain('scenario')
    const stored = (await sandbox.services.storage.policies.find(
      sandbox.db.prepare<{ id: number }>('SELECT id FROM sessions').get()!.id,
      issued.body.data.policy_ref,
    ))!
    expect(stored.status).toBe('issued')
    expect(stored.trip.end_date).toBe(trip.end_date)
  })

  test('an age sent as a string is validation_failed, not read as a number', async () => {
    const sandbox = await inProcessApp()
    for (const age of ['30', ' 7 ']) {
      const response = await sandbox.call('plans/search', { trip: tripFrom(START_MS, 1, 3), travellers: [{ age: 40 }, { age }] })
      expect(response.status).toBe(422)
      expect(response.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'travellers[1].age' }] })
    }
  })

  test('an object with its own toString where a string belongs is validation_failed, never a 500', async () => {
    // Such an object throws when made a string; Elysia words its validation errors with the value.
    const sandbox = await inProcessApp()
    const odd: unknown[] = [{ toString: 'QZXMARK' }, [[{ toString: 'x' }]], [{ valueOf: 'x', toString: 2 }]]
    const trip = tripFrom(START_MS, 1, 3)
    const search = await sandbox.call('plans/search', { trip, travellers: [{ age: 30 }] })
    const token = search.cookie!
    const planId = search.body.data.plans[0].plan_id
    for (const value of odd) {
      const replies = [
        await sandbox.call('plans/search', { trip: { ...trip, destination_country: value }, travellers: [{ age: 30 }] }, { cookie: token }),
        await sandbox.call('plans/search', { trip, travellers: [{ age: 30 }], currency: value }, { cookie: token }),
        await sandbox.call('policy/new', { plan_id: value, trip, travellers: [{ age: 30 }] }, { cookie: token }),
        await sandbox.call('policy/new', { plan_id: planId, trip, travellers: [{ age: 30 }], partner_reference: value }, { cookie: token }),
      ]
      for (const reply of replies) expect(reply.body.error?.code, JSON.stringify(value)).toBe('validation_failed')
    }

    // The member's name written with JSON escapes is the same member.
    const escaped = await sandbox.app.handle(
      new Request('http://localhost/api/sandbox/plans/search', {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: `sbx_session=${token}` },
        body: `{"trip":${JSON.stringify({ ...trip, destination_country: '@' }).replace('"@"', '{"to\\u0053tring":"x"}')},"travellers":[{"age":30}]}`,
      }),
    )
    expect(escaped.status).toBe(422)
    expect(((await escaped.json()) as any).error.details).toEqual([{ field: 'trip.destination_country', issue: expect.any(String) }])
    expect(sandbox.logs.filter((line) => line.includes('"level":"error"'))).toEqual([])
  })

  test('a body nested thousands deep answers as any deep body, whatever names it spells (escapes, toString)', async () => {
    // The names make the body take the printable() walk, which must not overflow the stack.
    const sandbox = await inProcessApp()
    const deep = '['.repeat(7_000) + ']'.repeat(7_000)
    const post = async (body: string) => {
      const response = await sandbox.app.handle(
        new Request('http://localhost/api/sandbox/plans/search', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }),
      )
      return ((await response.json()) as any).error.code
    }
    for (const name of ['plain', '\\u0061', 'toString']) {
      expect(await post(`{"${name}":${deep}}`), name).toBe('validation_failed')
      expect(await post(`{"email":1,"${name}":${deep}}`), name).toBe('pii_not_allowed')
    }
  })

  test('"today" comes from the clock: a trip starting before the fake today is refused', async () => {
    const sandbox = await inProcessApp()
    const yesterday = await sandbox.call('plans/search', { trip: tripFrom(START_MS, -1, 3), travellers: [{ age: 30 }] })
    expect(yesterday.status).toBe(422)
    expect(yesterday.body.error).toMatchObject({ code: 'validation_failed', details: [{ field: 'trip.start_date' }] })
    sandbox.setNow(START_MS - 86_400_000)
    expect((await sandbox.call('plans/search', { trip: tripFrom(START_MS, -1, 3), travellers: [{ age: 30 }] })).status).toBe(200)
  })
})

describe('events recorded before format 2', () => {
  test('a stored format-1 event (every endorsement, no version) is still listed as stored, not refused by the answer schema', async () => {
    const sandbox = await inProcessApp()
    const token = (await sandbox.call('session')).cookie!
    const trip = tripFrom(START_MS, 10, 5)
    const travellers = [{ age: 30 }]
    const search = await sandbox.call('plans/search', { trip, travellers }, { cookie: token })
    const issued = await sandbox.call('policy/new', { plan_id: search.body.data.plans[0].plan_id, trip, travellers }, { cookie: token })
    expect(issued.status).toBe(200)
    const read = (await sandbox.call(`policy/${issued.body.data.policy_ref}/read`, undefined, { cookie: token })).body.data
    await sandbox.services.storage.flush()
    const [event] = sandbox.db.prepare<{ ref: string; body: string }>("SELECT ref, body FROM events WHERE type = 'policy.issued'").all()
    const { version, data, ...rest } = JSON.parse(event!.body)
    expect(version).toBe(2)
    const formatOne = JSON.stringify({ ...rest, data: read })
    sandbox.db.prepare('UPDATE events SET body = ? WHERE ref = ?').run(formatOne, event!.ref)
    const listed = await sandbox.call('events', {}, { cookie: token })
    expect(listed.status).toBe(200)
    const { delivery, ...body } = listed.body.data.events[0]
    expect(JSON.stringify(body)).toBe(formatOne)
  })
})
