/**
 * `POST /api/sandbox/policy/{policy_ref}/read`: the policy as it stands and every endorsement, and
 * one answer for every ref that does not resolve.
 */
import { addDays, ages, API, before, expect, expectError, expectOk, fieldsOf, issuePolicy, sleep, test, tripFrom, withTimeSpans } from './support/client'

test.describe('POST /api/sandbox/policy/{policy_ref}/read', () => {
  test('a new policy reads back as issued: the issue fields, no endorsements, and the read changes nothing', async ({ request }) => {
    const { policy } = await issuePolicy(request, { trip: tripFrom(12, 7, 'IN', 'JP'), travellers: ages(45, 12), partner_reference: 'BK-READ-1' })
    const first = await expectOk(await request.post(API.read(policy.policy_ref)))
    expect(first.data).toEqual({ ...policy, updated_at: policy.created_at, endorsements: [] })
    // An empty object is the same call; a second read answers the same policy, one request later.
    const second = await expectOk(await request.post(API.read(policy.policy_ref), { data: {} }))
    expect(second.data).toEqual(first.data)
    expect(second.meta.rate_limit.remaining).toBe(first.meta.rate_limit.remaining - 1)
  })

  test('an endorsed policy reads back as it stands, with every endorsement: sequence, scenario, old and new value, premium change, time', async ({
    request,
  }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(8, 10, 'IN', 'FR') })
    const steps = [
      { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 4) },
      { scenario: 'correct_destination', destination_country: 'IT' },
      { scenario: 'correct_partner_reference', partner_reference: 'BK-LATE' },
      { scenario: 'shorten_end_date', new_end_date: addDays(trip.end_date, 1) },
    ]
    const answers: { premium: number; premium_change: number; endorsement: { created_at: string } }[] = []
    for (const step of steps) answers.push((await expectOk(await request.post(API.modify(policy.policy_ref), { data: step }))).data)
    const read = (await expectOk(await request.post(API.read(policy.policy_ref)))).data

    expect(read).toMatchObject({
      policy_ref: policy.policy_ref,
      svc_insurance_id: policy.svc_insurance_id,
      plan_id: policy.plan_id,
      status: 'endorsed',
      partner_reference: 'BK-LATE',
      trip: { ...trip, destination_country: 'IT', end_date: addDays(trip.end_date, 1) },
      travellers: policy.travellers,
      travellers_count: 1,
      documents: [{ type: 'policy_certificate', state: 'ready', format: 'pdf', ready_at: policy.created_at }],
      premium: answers.at(-1)!.premium,
      currency: policy.currency,
      created_at: policy.created_at,
      updated_at: answers.at(-1)!.endorsement.created_at,
    })
    expect(read.endorsements).toEqual(
      [
        { sequence: 1, scenario: 'extend_end_date', field: 'trip.end_date', old_value: trip.end_date, new_value: addDays(trip.end_date, 4) },
        { sequence: 2, scenario: 'correct_destination', field: 'trip.destination_country', old_value: 'FR', new_value: 'IT' },
        { sequence: 3, scenario: 'correct_partner_reference', field: 'partner_reference', old_value: null, new_value: 'BK-LATE' },
        { sequence: 4, scenario: 'shorten_end_date', field: 'trip.end_date', old_value: addDays(trip.end_date, 4), new_value: addDays(trip.end_date, 1) },
      ].map((expected, index) => ({ ...expected, premium_change: answers[index]!.premium_change, created_at: answers[index]!.endorsement.created_at })),
    )
    // The premium changes add up to the current premium.
    const total = read.endorsements.reduce((sum: number, endorsement: { premium_change: number }) => sum + endorsement.premium_change, policy.premium)
    expect(total).toBeCloseTo(read.premium, 2)
  })

  test('unknown, malformed, other-session and expired refs all answer the same policy_not_found', async ({ request, newClient, privateServer }) => {
    const { policy } = await issuePolicy(request)
    const other = await newClient()
    // A session of its own first: a call with no cookie opens one and says so in its "not found".
    await expectOk(await other.post(API.session))
    const refusals = [
      await other.post(API.read(policy.policy_ref)), // another session's policy
      await request.post(API.read('pol_sbx_00000000000000000000')), // well formed, unknown
      await request.post(API.read('not-a-ref')),
      await request.post(API.read('%E0%A4%A')), // does not decode
    ]
    // A policy whose session has ended, asked for from the session that follows it (2-second
    // sessions; longer ones only if this machine cannot search and issue within one).
    let afterExpiry: Awaited<ReturnType<typeof other.post>> | undefined
    await withTimeSpans([2, 4, 8], async (seconds) => {
      const short = await privateServer(`read-back-expired-${seconds}`, { SANDBOX_SESSION_TTL_SECONDS: String(seconds) })
      const late = await newClient({ baseURL: short.url })
      const expiresAt = Date.parse((await expectOk(await late.post(API.session))).data.expires_at)
      const ended = await before(expiresAt, () => issuePolicy(late))
      await sleep(expiresAt - Date.now() + 100)
      // The jar keeps the cookie past the session's end: the first call after it is told so and the
      // cookie is cleared; the next one, with no cookie, opens a new session.
      await expectError(await late.post(API.read(ended.policy.policy_ref)), 401, 'session_expired')
      afterExpiry = await late.post(API.read(ended.policy.policy_ref))
    })

    const errors = []
    for (const response of refusals) errors.push(await expectError(response, 404, 'policy_not_found'))
    for (const error of errors) expect(error).toEqual(errors[0])
    expect(errors[0]).not.toHaveProperty('details')
    // The same answer, plus the hint that the call carried no session cookie.
    const late = await expectError(afterExpiry!, 404, 'policy_not_found')
    expect(late.message.startsWith(`${errors[0]!.message} This call carried no session cookie`)).toBe(true)
    expect(fieldsOf(late)).toEqual(['Cookie'])
  })

  test('read takes no fields, and is POST only', async ({ request }) => {
    const { policy } = await issuePolicy(request)
    const error = await expectError(await request.post(API.read(policy.policy_ref), { data: { include: 'all' } }), 422, 'validation_failed')
    expect(error.details).toEqual([{ field: 'include', issue: 'is not an accepted field' }])
    await expectError(await request.get(API.read(policy.policy_ref)), 405, 'method_not_allowed')
  })
})
