import { randomUUID } from 'node:crypto'
import { addDays, ages, API, expect, expectError, expectOk, fieldsOf, issuePolicy, searchBody, searchPlans, test, tripFrom } from './support/client'

const replayed = (response: { headers(): Record<string, string> }) => response.headers()['idempotent-replayed']

async function issueBody(client: Parameters<typeof searchPlans>[0], trip = tripFrom(6, 6), travellers = ages(30)) {
  const { plans } = await searchPlans(client, searchBody(trip, travellers))
  return { plan_id: plans[0].plan_id as string, trip, travellers }
}

test.describe('Idempotency-Key', () => {
  test('same key and body: the first answer again, marked Idempotent-Replayed; no second policy', async ({ request }) => {
    const body = await issueBody(request)
    const key = randomUUID()
    const first = await request.post(API.issue, { data: body, headers: { 'idempotency-key': key } })
    const one = await expectOk(first)
    expect(replayed(first)).toBeUndefined()
    const second = await request.post(API.issue, { data: body, headers: { 'idempotency-key': key } })
    const two = await expectOk(second)
    expect(replayed(second)).toBe('true')
    expect(two.data.policy_ref).toBe(one.data.policy_ref)
    expect(two.data).toEqual(one.data)
    expect(two.request_id).not.toBe(one.request_id)
    // Without the key, a new policy.
    const third = await expectOk(await request.post(API.issue, { data: body }))
    expect(third.data.policy_ref).not.toBe(one.data.policy_ref)
  })

  test('same key with a different body: 422 idempotency_key_reused', async ({ request }) => {
    const body = await issueBody(request)
    const key = randomUUID()
    await expectOk(await request.post(API.issue, { data: body, headers: { 'idempotency-key': key } }))
    const error = await expectError(
      await request.post(API.issue, { data: { ...body, partner_reference: 'ANOTHER' }, headers: { 'idempotency-key': key } }),
      422,
      'idempotency_key_reused',
    )
    expect(JSON.stringify(error)).not.toContain(key)
  })

  test('10 concurrent requests with one key create exactly one policy', async ({ request }) => {
    const body = await issueBody(request)
    const key = randomUUID()
    const responses = await Promise.all(Array.from({ length: 10 }, () => request.post(API.issue, { data: body, headers: { 'idempotency-key': key } })))
    const refs = new Set<string>()
    let fresh = 0
    for (const response of responses) {
      if (response.status() === 409) {
        await expectError(response, 409, 'idempotency_in_progress')
        continue
      }
      refs.add((await expectOk(response)).data.policy_ref)
      if (replayed(response) !== 'true') fresh++
    }
    expect(refs.size).toBe(1)
    expect(fresh).toBe(1)
  })

  test('the same key in another session is independent', async ({ request, newClient }) => {
    const key = randomUUID()
    const mine = await issueBody(request)
    const first = (await expectOk(await request.post(API.issue, { data: mine, headers: { 'idempotency-key': key } }))).data
    const other = await newClient()
    // Same body in the other session: its own new policy, not a replay.
    const sameBody = await issueBody(other)
    expect(sameBody).toEqual(mine)
    const response = await other.post(API.issue, { data: sameBody, headers: { 'idempotency-key': key } })
    const theirs = (await expectOk(response)).data
    expect(replayed(response)).toBeUndefined()
    expect(theirs.policy_ref).not.toBe(first.policy_ref)
    // A different body in the other session: not "reused" either.
    const different = await issueBody(other, tripFrom(9, 3, 'IN', 'JP'))
    const secondKey = randomUUID()
    await expectOk(await request.post(API.issue, { data: mine, headers: { 'idempotency-key': secondKey } }))
    await expectOk(await other.post(API.issue, { data: different, headers: { 'idempotency-key': secondKey } }))
  })

  test('keys of 1 to 255 characters are accepted; longer ones are validation_failed', async ({ request }) => {
    const body = await issueBody(request)
    await expectOk(await request.post(API.issue, { data: body, headers: { 'idempotency-key': 'k' } }))
    await expectOk(await request.post(API.issue, { data: body, headers: { 'idempotency-key': 'K'.repeat(255) } }))
    const error = await expectError(await request.post(API.issue, { data: body, headers: { 'idempotency-key': 'L'.repeat(256) } }), 422, 'validation_failed')
    expect(fieldsOf(error).join(' ')).toMatch(/idempotency-key/i)
    expect(JSON.stringify(error)).not.toContain('L'.repeat(256))
  })

  test('on modify: a replay does not endorse twice; another body under the key is refused', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    const key = randomUUID()
    const extend = { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 2) }
    const first = await expectOk(await request.post(API.modify(policy.policy_ref), { data: extend, headers: { 'idempotency-key': key } }))
    const replay = await request.post(API.modify(policy.policy_ref), { data: extend, headers: { 'idempotency-key': key } })
    const again = await expectOk(replay)
    expect(replayed(replay)).toBe('true')
    expect(again.data).toEqual(first.data)
    expect(again.data.endorsement?.sequence).toBe(1)
    await expectError(
      await request.post(API.modify(policy.policy_ref), { data: { ...extend, new_end_date: addDays(trip.end_date, 4) }, headers: { 'idempotency-key': key } }),
      422,
      'idempotency_key_reused',
    )
    // The policy was endorsed once: the next correction is number 2.
    const next = await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_destination', destination_country: 'DE' } }))
    expect(next.data.endorsement?.sequence).toBe(2)
  })
})
