import { addDays, ages, API, expect, expectError, fieldsOf, issuePolicy, searchBody, test, tripFrom } from './support/client'

const nextYear = new Date().getUTCFullYear() + 1

/** Bodies that break one rule each, with the JSON path the answer must name. */
const searchCases: { name: string; body: () => unknown; field: string }[] = [
  { name: 'a missing required field', body: () => ({ trip: tripFrom(3, 5) }), field: 'travellers' },
  {
    name: 'a missing trip field',
    body: () => {
      const { end_date: _, ...trip } = tripFrom(3, 5)
      return { trip, travellers: ages(30) }
    },
    field: 'trip.end_date',
  },
  { name: 'an unknown top-level field', body: () => ({ ...searchBody(), coupon: 'SAVE10' }), field: 'coupon' },
  { name: 'an unknown trip field', body: () => ({ trip: { ...tripFrom(3, 5), stopover: 'AE' }, travellers: ages(30) }), field: 'trip.stopover' },
  {
    name: 'an unknown traveller field',
    body: () => ({ trip: tripFrom(3, 5), travellers: [{ age: 30 }, { age: 31, seat: '12A' }] }),
    field: 'travellers[1].seat',
  },
  {
    name: 'an unknown field named like data (reported on its object)',
    body: () => ({ trip: tripFrom(3, 5), travellers: [{ age: 30, 'Ravi Kumar +91 98765 43210': 1 }] }),
    field: 'travellers[0]',
  },
  { name: 'a lowercase country', body: () => searchBody(tripFrom(3, 5, 'in', 'FR')), field: 'trip.origin_country' },
  { name: 'an unassigned country (XX)', body: () => searchBody(tripFrom(3, 5, 'IN', 'XX')), field: 'trip.destination_country' },
  { name: 'a three-letter country', body: () => searchBody(tripFrom(3, 5, 'IND', 'FR')), field: 'trip.origin_country' },
  { name: 'a date that does not exist (Feb 30)', body: () => searchBody({ ...tripFrom(3, 5), end_date: `${nextYear}-02-30` }), field: 'trip.end_date' },
  { name: 'a date in another format', body: () => searchBody({ ...tripFrom(3, 5), start_date: '01/02/2030' }), field: 'trip.start_date' },
  { name: 'a start date in the past', body: () => searchBody(tripFrom(-2, 5)), field: 'trip.start_date' },
  { name: 'a start date more than 365 days ahead', body: () => searchBody(tripFrom(400, 5)), field: 'trip.start_date' },
  {
    name: 'an end date before the start date',
    body: () => {
      const trip = tripFrom(10, 5)
      return searchBody({ ...trip, end_date: addDays(trip.start_date, -1) })
    },
    field: 'trip.end_date',
  },
  { name: 'age 111', body: () => searchBody(tripFrom(3, 5), ages(30, 31, 111)), field: 'travellers[2].age' },
  { name: 'a negative age', body: () => searchBody(tripFrom(3, 5), ages(-1)), field: 'travellers[0].age' },
  { name: 'a fractional age (1.5)', body: () => searchBody(tripFrom(3, 5), ages(30, 1.5)), field: 'travellers[1].age' },
  { name: 'an age given as a string', body: () => ({ trip: tripFrom(3, 5), travellers: [{ age: '30' }] }), field: 'travellers[0].age' },
  { name: 'an age given as null', body: () => ({ trip: tripFrom(3, 5), travellers: [{ age: null }] }), field: 'travellers[0].age' },
  { name: 'an empty traveller list', body: () => searchBody(tripFrom(3, 5), []), field: 'travellers' },
  { name: 'travellers that are not objects', body: () => ({ trip: tripFrom(3, 5), travellers: [30] }), field: 'travellers[0]' },
  { name: 'a trip that is not an object', body: () => ({ trip: 'IN-FR', travellers: ages(30) }), field: 'trip' },
  { name: 'a lowercase currency ("usd")', body: () => searchBody(tripFrom(3, 5), ages(30), 'usd'), field: 'currency' },
  { name: 'a body that is not an object', body: () => [searchBody()], field: '$' },
]

test.describe('validation_failed (422) names every offending field by JSON path', () => {
  for (const { name, body, field } of searchCases) {
    test(`plan search: ${name}`, async ({ request }) => {
      const error = await expectError(await request.post(API.search, { data: body() }), 422, 'validation_failed')
      expect(fieldsOf(error)).toContain(field)
    })
  }

  test('every problem in one body is listed', async ({ request }) => {
    const body = { trip: { ...tripFrom(3, 5, 'in', 'FR'), extra: 1 }, travellers: [{ age: 111 }, { age: 1.5 }], currency: 'usd' }
    const error = await expectError(await request.post(API.search, { data: body }), 422, 'validation_failed')
    expect(fieldsOf(error)).toEqual(expect.arrayContaining(['trip.origin_country', 'trip.extra', 'travellers[0].age', 'travellers[1].age', 'currency']))
    const dates = { trip: { ...tripFrom(-3, 5, 'IN', 'XX'), end_date: `${nextYear}-02-30` }, travellers: ages(30) }
    const second = await expectError(await request.post(API.search, { data: dates }), 422, 'validation_failed')
    expect(fieldsOf(second).sort()).toEqual(['trip.destination_country', 'trip.end_date', 'trip.start_date'])
  })

  test('policy issue: missing plan_id, bad trip, bad ages, bad partner_reference', async ({ request }) => {
    const trip = tripFrom(3, 5)
    const missing = await expectError(await request.post(API.issue, { data: { trip, travellers: ages(30) } }), 422, 'validation_failed')
    expect(fieldsOf(missing)).toEqual(['plan_id'])
    const bad = await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_x', trip: { ...trip, origin_country: 'ZZ' }, travellers: ages(30) } }),
      422,
      'validation_failed',
    )
    expect(fieldsOf(bad)).toEqual(['trip.origin_country'])
    const age = await expectError(await request.post(API.issue, { data: { plan_id: 'plan_x', trip, travellers: ages(30, 111) } }), 422, 'validation_failed')
    expect(fieldsOf(age)).toEqual(['travellers[1].age'])
    const longRef = await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_x', trip, travellers: ages(30), partner_reference: 'R'.repeat(65) } }),
      422,
      'validation_failed',
    )
    expect(fieldsOf(longRef)).toEqual(['partner_reference'])
    const emptyRef = await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_x', trip, travellers: ages(30), partner_reference: '' } }),
      422,
      'validation_failed',
    )
    expect(fieldsOf(emptyRef)).toEqual(['partner_reference'])
    const unknown = await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_x', trip, travellers: ages(30), currency: 'INR' } }),
      422,
      'validation_failed',
    )
    expect(fieldsOf(unknown)).toEqual(['currency'])
  })

  test('modify: the scenario must be known and carry exactly its own field', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    const modify = (data: unknown) => request.post(API.modify(policy.policy_ref), { data })
    const cases: [unknown, string][] = [
      [{ new_end_date: addDays(trip.end_date, 1) }, 'scenario'],
      [{ scenario: 'cancel' }, 'scenario'],
      [{ scenario: 'extend_end_date' }, 'new_end_date'],
      [{ scenario: 'shorten_end_date' }, 'new_end_date'],
      [{ scenario: 'correct_destination' }, 'destination_country'],
      [{ scenario: 'correct_partner_reference' }, 'partner_reference'],
      [{ scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 1), destination_country: 'DE' }, 'destination_country'],
      [{ scenario: 'correct_destination', destination_country: 'DE', new_end_date: addDays(trip.end_date, 1) }, 'new_end_date'],
      [{ scenario: 'correct_partner_reference', partner_reference: 'X-1', destination_country: 'DE' }, 'destination_country'],
      [{ scenario: 'extend_end_date', new_end_date: `${nextYear}-02-30` }, 'new_end_date'],
      [{ scenario: 'extend_end_date', new_end_date: 'tomorrow' }, 'new_end_date'],
      [{ scenario: 'correct_destination', destination_country: 'XX' }, 'destination_country'],
      [{ scenario: 'correct_destination', destination_country: 'de' }, 'destination_country'],
      [{ scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 1), note: 'x' }, 'note'],
    ]
    for (const [body, field] of cases) {
      const error = await expectError(await modify(body), 422, 'validation_failed')
      expect(fieldsOf(error), JSON.stringify(body)).toContain(field)
    }
  })
})

test.describe('limit errors (422)', () => {
  test('trip_too_long: search and issue over 180 days; exactly 180 is fine', async ({ request }) => {
    const tooLong = tripFrom(2, 181)
    const search = await expectError(await request.post(API.search, { data: searchBody(tooLong) }), 422, 'trip_too_long')
    expect(fieldsOf(search)).toEqual(['trip.end_date'])
    const issue = await expectError(await request.post(API.issue, { data: { plan_id: 'plan_any', trip: tooLong, travellers: ages(30) } }), 422, 'trip_too_long')
    expect(fieldsOf(issue)).toEqual(['trip.end_date'])
    expect((await request.post(API.search, { data: searchBody(tripFrom(2, 180)) })).status()).toBe(200)
  })

  test('trip_too_long: an extension past 180 days; up to 180 is fine', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(2, 170) })
    const error = await expectError(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.start_date, 181) } }),
      422,
      'trip_too_long',
    )
    expect(fieldsOf(error)).toContain('trip.end_date')
    const fine = await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.start_date, 180) } })
    expect(fine.status()).toBe(200)
  })

  test('too_many_travellers: search and issue with 7', async ({ request }) => {
    const seven = ages(30, 31, 32, 33, 34, 35, 36)
    const search = await expectError(await request.post(API.search, { data: searchBody(tripFrom(3, 5), seven) }), 422, 'too_many_travellers')
    expect(fieldsOf(search)).toEqual(['travellers'])
    const issue = await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_any', trip: tripFrom(3, 5), travellers: seven } }),
      422,
      'too_many_travellers',
    )
    expect(fieldsOf(issue)).toEqual(['travellers'])
  })

  test('unsupported_currency for three upper-case letters outside the list; anything else is validation_failed', async ({ request }) => {
    const error = await expectError(await request.post(API.search, { data: searchBody(tripFrom(3, 5), ages(30), 'XYZ') }), 422, 'unsupported_currency')
    expect(fieldsOf(error)).toEqual(['currency'])
    expect(JSON.stringify(error)).not.toContain('XYZ')
    for (const currency of ['usd', 'US', 'USDX', '', 'U$D']) {
      const invalid = await expectError(await request.post(API.search, { data: searchBody(tripFrom(3, 5), ages(30), currency) }), 422, 'validation_failed')
      expect(fieldsOf(invalid)).toEqual(['currency'])
    }
  })
})
