import { addDays, ages, API, expect, expectError, expectOk, fieldsOf, issuePolicy, searchBody, searchPlans, test, tripFrom } from './support/client'

test.describe('plan_not_found (404)', () => {
  test('an unknown plan_id', async ({ request }) => {
    const trip = tripFrom(4, 7)
    await searchPlans(request, searchBody(trip))
    const error = await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_does_not_exist', trip, travellers: ages(30) } }),
      404,
      'plan_not_found',
    )
    expect(JSON.stringify(error)).not.toContain('plan_does_not_exist')
  })

  test('a plan_id returned to ANOTHER session is not usable', async ({ newClient }) => {
    const [owner, stranger] = [await newClient(), await newClient()]
    const trip = tripFrom(4, 7, 'IN', 'SG')
    const { plans } = await searchPlans(owner, searchBody(trip))
    // The stranger has a session (it searched something else) but never searched this trip.
    await searchPlans(stranger, searchBody(tripFrom(30, 3, 'IN', 'US')))
    await expectError(await stranger.post(API.issue, { data: { plan_id: plans[0].plan_id, trip, travellers: ages(30) } }), 404, 'plan_not_found')
    // The owner can.
    await expectOk(await owner.post(API.issue, { data: { plan_id: plans[0].plan_id, trip, travellers: ages(30) } }))
  })
})

test.describe('plan_mismatch (409)', () => {
  test('issue with another end_date than the search that returned the plan', async ({ request }) => {
    const trip = tripFrom(4, 7)
    const { plans } = await searchPlans(request, searchBody(trip, ages(30, 40)))
    const error = await expectError(
      await request.post(API.issue, { data: { plan_id: plans[0].plan_id, trip: { ...trip, end_date: addDays(trip.end_date, 1) }, travellers: ages(30, 40) } }),
      409,
      'plan_mismatch',
    )
    expect(fieldsOf(error)).toEqual(['trip.end_date'])
  })

  test('issue with other traveller ages than the search', async ({ request }) => {
    const trip = tripFrom(4, 7)
    const { plans } = await searchPlans(request, searchBody(trip, ages(30, 40)))
    const different = await expectError(
      await request.post(API.issue, { data: { plan_id: plans[0].plan_id, trip, travellers: ages(30, 41) } }),
      409,
      'plan_mismatch',
    )
    expect(fieldsOf(different)).toEqual(['travellers'])
    const fewer = await expectError(await request.post(API.issue, { data: { plan_id: plans[0].plan_id, trip, travellers: ages(30) } }), 409, 'plan_mismatch')
    expect(fieldsOf(fewer)).toEqual(['travellers'])
  })

  test('issue with another destination than the search', async ({ request }) => {
    const trip = tripFrom(4, 7, 'IN', 'FR')
    const { plans } = await searchPlans(request, searchBody(trip))
    const error = await expectError(
      await request.post(API.issue, { data: { plan_id: plans[0].plan_id, trip: { ...trip, destination_country: 'DE' }, travellers: ages(30) } }),
      409,
      'plan_mismatch',
    )
    expect(fieldsOf(error)).toEqual(['trip.destination_country'])
  })
})

test.describe('policy_not_found (404)', () => {
  test('unknown, malformed and other-session refs get the same answer', async ({ request, newClient }) => {
    const other = await newClient()
    const { policy: foreign } = await issuePolicy(other)
    const { trip } = await issuePolicy(request)
    const body = { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 3) }
    const refs = ['pol_sbx_0123456789abcdef0123', 'not-a-policy', foreign.policy_ref as string]
    const answers = []
    for (const ref of refs) {
      const response = await request.post(API.modify(ref), { data: body })
      await expectError(response, 404, 'policy_not_found')
      const { request_id: _, meta: __, ...rest } = await response.json()
      answers.push({ status: response.status(), rest })
      expect(JSON.stringify(rest)).not.toContain(ref)
    }
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
    // The foreign policy is still intact for its owner.
    await expectOk(await other.post(API.modify(foreign.policy_ref), { data: { scenario: 'correct_destination', destination_country: 'DE' } }))
  })
})

test.describe('scenario_not_applicable (422)', () => {
  test('extend to a date not after the current end', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(5, 10) })
    for (const date of [trip.end_date, addDays(trip.end_date, -1)]) {
      const error = await expectError(
        await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: date } }),
        422,
        'scenario_not_applicable',
      )
      expect(fieldsOf(error)).toEqual(['new_end_date'])
    }
  })

  test('shorten to a date not before the end, or before the start', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(5, 10) })
    for (const date of [addDays(trip.end_date, 1), trip.end_date, addDays(trip.start_date, -1)]) {
      const error = await expectError(
        await request.post(API.modify(policy.policy_ref), { data: { scenario: 'shorten_end_date', new_end_date: date } }),
        422,
        'scenario_not_applicable',
      )
      expect(fieldsOf(error)).toEqual(['new_end_date'])
    }
  })

  test('correct_destination to the current destination', async ({ request }) => {
    const { policy } = await issuePolicy(request, { trip: tripFrom(5, 10, 'IN', 'FR') })
    const error = await expectError(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_destination', destination_country: 'FR' } }),
      422,
      'scenario_not_applicable',
    )
    expect(fieldsOf(error)).toEqual(['destination_country'])
  })

  test('a domestic policy cannot be moved abroad', async ({ request }) => {
    const { policy, plan } = await issuePolicy(request, { trip: tripFrom(5, 10, 'IN', 'IN') })
    expect(plan.name).toMatch(/domestic/i)
    const error = await expectError(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_destination', destination_country: 'FR' } }),
      422,
      'scenario_not_applicable',
    )
    expect(fieldsOf(error)).toEqual(['destination_country'])
  })

  test('a failed correction changes nothing', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(5, 10) })
    await expectError(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.start_date, 200) } }),
      422,
      'trip_too_long',
    )
    // The end date is still the original: extending by one day works and is endorsement number 1.
    const data = (
      await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 1) } }))
    ).data
    expect(data.endorsement?.sequence).toBe(1)
  })
})
