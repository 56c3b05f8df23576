import { addDays, ages, API, expect, expectOk, issuePolicy, searchBody, searchPlans, test, tripFrom } from './support/client'

const PERSONAL =
  /^(name|firstname|lastname|fullname|givenname|middlename|familyname|surname|dob|street|postcode|zip|nationalid|pan|ssn|gender)$|email|phone|mobile|telephone|passport|birth|address|nominee|aadhaar/

/** Every object key in a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf)
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => [key, ...keysOf(item)])
  return []
}

test.describe('POST /api/sandbox/policy/new', () => {
  test('issues a policy with every field of spec 4.3 and a ready PDF certificate', async ({ request }) => {
    const trip = tripFrom(9, 12, 'IN', 'DE')
    const search = await searchPlans(request, searchBody(trip, ages(41, 39)))
    const plan = search.plans[0]
    const response = await request.post(API.issue, { data: { plan_id: plan.plan_id, trip, travellers: ages(41, 39) } })
    const body = await expectOk(response)
    const policy = body.data
    expect(policy.policy_ref).toMatch(/^pol_sbx_[A-Za-z0-9]+$/)
    expect(policy.svc_insurance_id).toMatch(/^svc_sbx_[A-Za-z0-9]+$/)
    expect(policy.status).toBe('issued')
    expect(policy.plan_id).toBe(plan.plan_id)
    expect(policy.travellers_count).toBe(2)
    // Ready at once: its ready_at is the issue time.
    expect(policy.documents).toEqual([{ type: 'policy_certificate', state: 'ready', format: 'pdf', ready_at: policy.created_at, version: 1 }])
    expect(policy.traveller_identity).toMatch(/synthetic/i)
    expect(policy.traveller_identity).toMatch(/generated/i)
    expect(policy).not.toHaveProperty('partner_reference')
    // No personal-data field ever comes back: the identity is the service's own.
    for (const key of keysOf(policy)) expect(key.toLowerCase().replace(/[\s_-]/g, '')).not.toMatch(PERSONAL)
  })

  test('echoes partner_reference when supplied', async ({ request }) => {
    const { policy } = await issuePolicy(request, { partner_reference: 'BOOKING-2041/ab c' })
    expect(policy.partner_reference).toBe('BOOKING-2041/ab c')
    expect(policy.status).toBe('issued')
  })

  test('accepts the traveller ages in any order (compared with the search as a multiset)', async ({ request }) => {
    const trip = tripFrom(4, 6, 'IN', 'AE')
    const { plans } = await searchPlans(request, searchBody(trip, ages(30, 5, 62)))
    const policy = (await expectOk(await request.post(API.issue, { data: { plan_id: plans[0].plan_id, trip, travellers: ages(62, 30, 5) } }))).data
    expect(policy.travellers_count).toBe(3)
    expect(policy.plan_id).toBe(plans[0].plan_id)
  })

  test('each issue creates a distinct policy, even against the same plan', async ({ request }) => {
    const { body, policy } = await issuePolicy(request)
    const again = (await expectOk(await request.post(API.issue, { data: body }))).data
    expect(again.policy_ref).not.toBe(policy.policy_ref)
    expect(again.svc_insurance_id).not.toBe(policy.svc_insurance_id)
  })
})

test.describe('POST /api/sandbox/policy/{policy_ref}/modify', () => {
  test('extend_end_date endorses the policy, answers only the changed end_date and a positive premium change', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(8, 10, 'IN', 'FR') })
    const newEnd = addDays(trip.end_date, 5)
    const body = await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: newEnd } }))
    const data = body.data
    expect(data.policy_ref).toBe(policy.policy_ref)
    expect(data.status).toBe('endorsed')
    expect(data.trip).toEqual({ end_date: newEnd })
    expect(data).not.toHaveProperty('partner_reference')
    expect(data.premium_change).toBeGreaterThan(0)
    expect(data.endorsement?.sequence).toBe(1)
    if (policy.premium !== undefined) expect(data.premium).toBeCloseTo(policy.premium + data.premium_change, 2)
  })

  test('shorten_end_date answers the new end_date and a negative premium change', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(8, 10, 'IN', 'FR') })
    const newEnd = addDays(trip.end_date, -4)
    const data = (await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'shorten_end_date', new_end_date: newEnd } }))).data
    expect(data.status).toBe('endorsed')
    expect(data.trip).toEqual({ end_date: newEnd })
    expect(data.premium_change).toBeLessThan(0)
    if (policy.premium !== undefined) expect(data.premium).toBeCloseTo(policy.premium + data.premium_change, 2)
    // Shortening to the start date itself (a one-day cover) is allowed.
    const toStart = (
      await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'shorten_end_date', new_end_date: trip.start_date } }))
    ).data
    expect(toStart.trip).toEqual({ end_date: trip.start_date })
    expect(toStart.premium_change).toBeLessThan(0)
  })

  test('correct_destination answers only the changed destination_country', async ({ request }) => {
    const { policy } = await issuePolicy(request, { trip: tripFrom(8, 10, 'IN', 'FR') })
    const data = (await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_destination', destination_country: 'DE' } })))
      .data
    expect(data.policy_ref).toBe(policy.policy_ref)
    expect(data.status).toBe('endorsed')
    expect(data.trip).toEqual({ destination_country: 'DE' })
  })

  test('correct_partner_reference answers data.partner_reference, not a trip field', async ({ request }) => {
    const { policy } = await issuePolicy(request, { partner_reference: 'OLD-REF-1' })
    const data = (
      await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_partner_reference', partner_reference: 'NEW-REF-2' } }))
    ).data
    expect(data.policy_ref).toBe(policy.policy_ref)
    expect(data.status).toBe('endorsed')
    expect(data.partner_reference).toBe('NEW-REF-2')
    expect(data).not.toHaveProperty('trip')
  })

  test('correct_partner_reference also sets a reference on a policy issued without one', async ({ request }) => {
    const { policy } = await issuePolicy(request)
    const data = (
      await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_partner_reference', partner_reference: 'FIRST-REF' } }))
    ).data
    expect(data.partner_reference).toBe('FIRST-REF')
  })

  test('an endorsed policy can be endorsed again: status stays endorsed, the sequence increments, state carries over', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(6, 10, 'IN', 'FR'), partner_reference: 'CHAIN-0' })
    const modify = (data: object) => request.post(API.modify(policy.policy_ref), { data })
    const extendedEnd = addDays(trip.end_date, 6)
    const steps = [
      { scenario: 'extend_end_date', new_end_date: extendedEnd },
      // Only valid if the extension above was kept: the new end is before the extended end but after the original.
      { scenario: 'shorten_end_date', new_end_date: addDays(trip.end_date, 3) },
      { scenario: 'correct_destination', destination_country: 'IT' },
      { scenario: 'correct_partner_reference', partner_reference: 'CHAIN-1' },
      { scenario: 'correct_destination', destination_country: 'ES' },
    ]
    let sequence = 0
    for (const step of steps) {
      const data = (await expectOk(await modify(step))).data
      expect(data.status).toBe('endorsed')
      expect(data.policy_ref).toBe(policy.policy_ref)
      expect(data.endorsement?.sequence).toBe(++sequence)
      expect(data.endorsement?.scenario).toBe(step.scenario)
    }
    // The current end is original + 3: extending to original + 2 is no extension any more.
    const late = await modify({ scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 2) })
    expect(late.status()).toBe(422)
    expect((await late.json()).error.code).toBe('scenario_not_applicable')
    // And the destination is now ES.
    const same = await modify({ scenario: 'correct_destination', destination_country: 'ES' })
    expect((await same.json()).error.code).toBe('scenario_not_applicable')
  })
})
