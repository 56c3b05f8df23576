import { addDays, ages, API, expect, expectOk, searchBody, sessionCookie, test, tripFrom, uniqueNetwork } from './support/client'

test.describe('restart', () => {
  test('sessions, policies and fair-use counters survive a SIGTERM restart on the same file', async ({ privateServer, newClient }) => {
    const first = await privateServer('restart-persistence')
    const networkA = uniqueNetwork()
    const client = await newClient({ baseURL: first.url, network: networkA })
    const created = await expectOk(await client.post(API.session))
    const trip = tripFrom(6, 8, 'IN', 'FR')
    const travellers = ages(33, 9)
    const searched = (await expectOk(await client.post(API.search, { data: searchBody(trip, travellers) }))).data
    const issued = (await expectOk(await client.post(API.issue, { data: { plan_id: searched.plans[0].plan_id, trip, travellers } }))).data
    const modified = await expectOk(
      await client.post(API.modify(issued.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 3) } }),
    )
    expect(modified.meta.rate_limit.remaining).toBe(26)

    expect(await first.stop('SIGTERM')).toBe(0)
    const second = await privateServer('restart-persistence', {}, { dbPath: first.dbPath })
    expect(second.url).not.toBe(first.url)

    // Same cookie jar, new server; from another network so that only the session's count shows.
    const response = await client.post(`${second.url}${API.modify(issued.policy_ref)}`, {
      data: { scenario: 'shorten_end_date', new_end_date: addDays(trip.end_date, 1) },
      headers: { 'x-forwarded-for': uniqueNetwork() },
    })
    const body = await expectOk(response)
    expect(sessionCookie(response)).toBeUndefined()
    expect(body.meta.session_expires_at).toBe(created.data.expires_at)
    expect(body.data.policy_ref).toBe(issued.policy_ref)
    expect(body.data.status).toBe('endorsed')
    expect(body.data.trip).toEqual({ end_date: addDays(trip.end_date, 1) })
    expect(body.data.endorsement?.sequence).toBe(2)
    expect(body.meta.rate_limit.remaining).toBe(25)
    // The embedded engine logs hits per tenth of a second: read back, the oldest counts up to 100 ms longer.
    const resetShift = Date.parse(body.meta.rate_limit.reset_at) - Date.parse(created.meta.rate_limit.reset_at)
    expect(resetShift).toBeGreaterThanOrEqual(0)
    expect(resetShift).toBeLessThan(100)

    // The network's count carried over too, and the plans are the same after the restart.
    const neighbour = await newClient({ baseURL: second.url, network: networkA })
    const again = await expectOk(await neighbour.post(API.search, { data: searchBody(trip, travellers) }))
    expect(again.meta.rate_limit.remaining).toBe(25)
    expect(again.data.plans).toEqual(searched.plans)
  })
})
