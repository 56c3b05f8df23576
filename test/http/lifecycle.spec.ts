/**
 * The policy lifecycle beyond issue and correction, on every target: cancellation with its refund
 * (preview, then the real one), price previews of corrections, business outcomes forced on issue,
 * and answers delayed on demand. On `pg` consecutive calls go to the two instances in turn.
 */
import { randomUUID } from 'node:crypto'
import {
  addDays,
  ages,
  API,
  before,
  expect,
  expectError,
  expectOk,
  issuePolicy,
  searchBody,
  searchPlans,
  sleep,
  test,
  TooSlow,
  tripFrom,
  withTimeSpans,
} from './support/client'

const DAY_MS = 86_400_000
const today = () => Math.floor(Date.now() / DAY_MS)
const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS
const minor = (amount: number) => Math.round(amount * 100)
const replayed = (response: { headers(): Record<string, string> }) => response.headers()['idempotent-replayed']

test.describe('POST /api/sandbox/policy/{policy_ref}/cancel', () => {
  test('before the start date: a preview answers the whole premium and changes nothing; the cancel gives the same refund', async ({ request }) => {
    const { policy } = await issuePolicy(request, { trip: tripFrom(9, 9, 'IN', 'FR'), travellers: ages(41, 9) })
    const preview = (await expectOk(await request.post(API.cancel(policy.policy_ref), { data: { preview: true } }))).data
    expect(preview).toEqual({
      preview: true,
      policy_ref: policy.policy_ref,
      status: 'issued',
      refund: { amount: policy.premium, currency: policy.currency, rule: 'full_before_start', unused_days: 10, cover_days: 10 },
    })
    expect((await expectOk(await request.post(API.read(policy.policy_ref)))).data.status).toBe('issued')

    const cancelled = (await expectOk(await request.post(API.cancel(policy.policy_ref)))).data
    expect(cancelled).toEqual({
      policy_ref: policy.policy_ref,
      status: 'cancelled',
      refund: preview.refund,
      cancelled_at: expect.any(String),
      cancelled_by: 'partner',
    })
    const read = (await expectOk(await request.post(API.read(policy.policy_ref)))).data
    expect(read.status).toBe('cancelled')
    expect(read.updated_at).toBe(cancelled.cancelled_at)
    expect(read.cancellation).toEqual({ cancelled_at: cancelled.cancelled_at, cancelled_by: 'partner', refund: cancelled.refund })
  })

  test('from the start date: the unused whole days pro rata, rounded down', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(0, 9, 'IN', 'DE'), travellers: ages(30) })
    const preview = (await expectOk(await request.post(API.cancel(policy.policy_ref), { data: { preview: true } }))).data
    const cancelled = (await expectOk(await request.post(API.cancel(policy.policy_ref), { data: {} }))).data
    // The day of cancelling counts as used (read from the server's answer, which may be past midnight).
    const unused = dayOf(trip.end_date) - dayOf(cancelled.cancelled_at.slice(0, 10))
    expect(cancelled.refund).toEqual({
      amount: Math.floor((minor(policy.premium) * unused) / 10) / 100,
      currency: policy.currency,
      rule: 'pro_rata_unused_days',
      unused_days: unused,
      cover_days: 10,
    })
    if (preview.refund.unused_days === unused) expect(preview.refund).toEqual(cancelled.refund) // same day, same refund
    expect(unused).toBeLessThan(10)
  })

  test('a cancelled policy: modify and cancel answer 409 policy_cancelled, previews too; read-back keeps its endorsements', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 3) } }))
    await expectOk(await request.post(API.cancel(policy.policy_ref)))
    for (const [path, data] of [
      [API.modify(policy.policy_ref), { scenario: 'correct_partner_reference', partner_reference: 'BK-AFTER' }],
      [API.modify(policy.policy_ref), { scenario: 'correct_partner_reference', partner_reference: 'BK-AFTER', preview: true }],
      [API.cancel(policy.policy_ref), {}],
      [API.cancel(policy.policy_ref), { preview: true }],
    ] as const) {
      await expectError(await request.post(path, { data }), 409, 'policy_cancelled')
    }
    const read = (await expectOk(await request.post(API.read(policy.policy_ref)))).data
    expect(read.endorsements.map((e: { scenario: string }) => e.scenario)).toEqual(['extend_end_date'])
    expect(read.partner_reference).toBeUndefined()
  })

  test('Idempotency-Key: a repeat answers the first cancellation again (on pg, from the other instance); concurrent repeats cancel once', async ({
    request,
  }) => {
    const { policy } = await issuePolicy(request)
    const key = randomUUID()
    const first = await request.post(API.cancel(policy.policy_ref), { headers: { 'idempotency-key': key } })
    const one = await expectOk(first)
    const second = await request.post(API.cancel(policy.policy_ref), { headers: { 'idempotency-key': key } })
    expect((await expectOk(second)).data).toEqual(one.data)
    expect(replayed(second)).toBe('true')
    // Another key on a cancelled policy is a new request: refused.
    await expectError(await request.post(API.cancel(policy.policy_ref), { headers: { 'idempotency-key': randomUUID() } }), 409, 'policy_cancelled')

    const { policy: other } = await issuePolicy(request)
    const together = randomUUID()
    const answers = await Promise.all([1, 2, 3, 4].map(() => request.post(API.cancel(other.policy_ref), { headers: { 'idempotency-key': together } })))
    const bodies = await Promise.all(answers.map(expectOk))
    expect(new Set(bodies.map((body) => body.data.cancelled_at)).size).toBe(1)
    expect(answers.filter((answer) => replayed(answer) === 'true')).toHaveLength(3)
  })

  test('concurrent cancels without a key: exactly one cancels, the others are policy_cancelled', async ({ request }) => {
    const { policy } = await issuePolicy(request)
    const answers = await Promise.all([1, 2, 3].map(() => request.post(API.cancel(policy.policy_ref))))
    expect(answers.map((answer) => answer.status()).sort()).toEqual([200, 409, 409])
  })

  test('the body takes only preview; an unknown ref is policy_not_found', async ({ request }) => {
    const { policy } = await issuePolicy(request)
    const error = await expectError(await request.post(API.cancel(policy.policy_ref), { data: { preview: 'yes', reason: 'x' } }), 422, 'validation_failed')
    expect(error.details!.map((detail) => detail.field).sort()).toEqual(['preview', 'reason'])
    await expectError(await request.post(API.cancel('pol_sbx_00000000000000000000')), 404, 'policy_not_found')
  })
})

test.describe('modify with "preview": true', () => {
  test('answers the changed field, the new premium and premium_change, writes nothing; the real modify answers the same figures', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request, { trip: tripFrom(6, 7, 'IN', 'FR'), travellers: ages(52) })
    for (const scenario of [
      { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 6) },
      { scenario: 'correct_destination', destination_country: 'DE' },
    ]) {
      const preview = (await expectOk(await request.post(API.modify(policy.policy_ref), { data: { ...scenario, preview: true } }))).data
      expect(preview.preview).toBe(true)
      expect(preview.endorsement).toBeUndefined()
      expect((await expectOk(await request.post(API.read(policy.policy_ref)))).data.updated_at).toBe(policy.created_at)
      const { endorsement, ...real } = (await expectOk(await request.post(API.modify(policy.policy_ref), { data: scenario }))).data
      expect({ ...real, preview: true }).toEqual(preview)
      expect(endorsement.scenario).toBe(scenario.scenario)
      policy.created_at = endorsement.created_at // the next preview must see this one's change, and nothing after it
    }
  })
})

test.describe('Sandbox-Outcome business outcomes on issue', () => {
  async function searched(request: Parameters<typeof searchPlans>[0], trip = tripFrom(5, 6)) {
    const travellers = ages(33)
    const { plans } = await searchPlans(request, searchBody(trip, travellers))
    return { plan: plans[0], body: { plan_id: plans[0].plan_id as string, trip, travellers } }
  }

  test('insurer_declined: 422 after every other check; nothing issued', async ({ request }) => {
    const { body } = await searched(request)
    const outcome = { 'sandbox-outcome': 'insurer_declined' }
    // The real checks come first: a plan the session never saw is still plan_not_found.
    await expectError(await request.post(API.issue, { data: { ...body, plan_id: 'plan_unknown' }, headers: outcome }), 404, 'plan_not_found')
    const key = randomUUID()
    const error = await expectError(await request.post(API.issue, { data: body, headers: { ...outcome, 'idempotency-key': key } }), 422, 'insurer_declined')
    expect(error.message).toMatch(/declined/)
    // A decline is not stored under the key: the same key without the header issues.
    const issued = await request.post(API.issue, { data: body, headers: { 'idempotency-key': key } })
    await expectOk(issued)
    expect(replayed(issued)).toBeUndefined()
  })

  test('price_changed: 409 with the premium at bind; the issue that accepts it with expected_premium succeeds at that premium', async ({ request }) => {
    const { plan, body } = await searched(request)
    const outcome = { 'sandbox-outcome': 'price_changed' }
    const error = await expectError(await request.post(API.issue, { data: body, headers: outcome }), 409, 'price_changed')
    const atBind = Math.round(minor(plan.premium) * 1.05) / 100
    expect(error.details).toEqual([{ field: 'expected_premium', issue: `must be ${atBind.toFixed(2)}, the premium at bind, to accept it` }])
    await expectError(await request.post(API.issue, { data: { ...body, expected_premium: plan.premium }, headers: outcome }), 409, 'price_changed')
    const issued = (await expectOk(await request.post(API.issue, { data: { ...body, expected_premium: atBind }, headers: outcome }))).data
    expect(issued.premium).toBe(atBind)
    // Without the header, expected_premium guards the quoted premium.
    await expectError(await request.post(API.issue, { data: { ...body, expected_premium: atBind } }), 409, 'price_changed')
    expect((await expectOk(await request.post(API.issue, { data: { ...body, expected_premium: plan.premium } }))).data.premium).toBe(plan.premium)
  })

  test('document_pending: the certificate is pending and not downloadable until ready_at, then ready', async ({ request }) => {
    const { body } = await searched(request)
    const policy = (await expectOk(await request.post(API.issue, { data: body, headers: { 'sandbox-outcome': 'document_pending' } }))).data
    const [certificate] = policy.documents
    expect(certificate.state).toBe('pending')
    const readyAt = Date.parse(certificate.ready_at)
    expect(readyAt - Date.parse(policy.created_at)).toBe(5_000)
    // Pending answers can only be seen before ready_at; a machine too slow to ask in time skips them.
    await before(readyAt, async () => {
      expect((await expectOk(await request.post(API.read(policy.policy_ref)))).data.documents[0].state).toBe('pending')
      const early = await request.post(API.certificate(policy.policy_ref))
      await expectError(early, 409, 'document_not_ready')
      expect(Number(early.headers()['retry-after'])).toBeGreaterThanOrEqual(1)
      expect(Number(early.headers()['retry-after'])).toBeLessThanOrEqual(5)
    }).catch((error) => {
      if (!(error instanceof TooSlow)) throw error
    })
    await sleep(readyAt - Date.now())
    await expect.poll(async () => (await expectOk(await request.post(API.read(policy.policy_ref)))).data.documents[0].state, { timeout: 20_000 }).toBe('ready')
    const pdf = await request.post(API.certificate(policy.policy_ref))
    expect(pdf.status()).toBe(200)
    expect(pdf.headers()['content-type']).toBe('application/pdf')
  })
})

test.describe('Sandbox-Delay-Ms', () => {
  test('the answer waits at least that long; another call of the same session is answered meanwhile (no lock held)', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    await withTimeSpans([1_500, 4_000, 9_000], async (delay) => {
      const sent = Date.now()
      let delayedAt = 0
      const delayed = request
        .post(API.modify(policy.policy_ref), {
          data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, delay / 500) },
          headers: { 'sandbox-delay-ms': String(delay) },
        })
        .then((answer) => ((delayedAt = Date.now()), answer))
      await sleep(100)
      await expectOk(await request.post(API.read(policy.policy_ref)))
      const readAt = Date.now()
      const answer = await expectOk(await delayed)
      expect(delayedAt - sent).toBeGreaterThanOrEqual(delay)
      expect(answer.data.trip.end_date).toBe(addDays(trip.end_date, delay / 500))
      if (readAt >= delayedAt) throw new TooSlow(`the read took ${readAt - sent} ms, past the ${delay} ms delay`)
    })
  })

  test('a client that gives up still had its call applied: a retry with the same Idempotency-Key gets the first answer', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    const key = randomUUID()
    const data = { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 2) }
    const gaveUp = await request
      .post(API.modify(policy.policy_ref), { data, headers: { 'idempotency-key': key, 'sandbox-delay-ms': '10000' }, timeout: 1_000 })
      .then(
        () => false,
        () => true,
      )
    expect(gaveUp).toBe(true)
    const retry = await request.post(API.modify(policy.policy_ref), { data, headers: { 'idempotency-key': key } })
    expect((await expectOk(retry)).data.endorsement.sequence).toBe(1)
    const read = (await expectOk(await request.post(API.read(policy.policy_ref)))).data
    expect(read.endorsements).toHaveLength(1)
  })

  test('a client that leaves ends the wait: the call is logged long before its delay would have run out', async ({ privateServer, playwright }) => {
    const server = await privateServer('delay-leave')
    const client = await playwright.request.newContext({ baseURL: server.url })
    try {
      const left = await client.post(API.session, { headers: { 'sandbox-delay-ms': '10000' }, timeout: 1_000 }).then(
        () => false,
        () => true,
      )
      expect(left).toBe(true)
      const logged = () =>
        server
          .stdout()
          .split('\n')
          .filter((line) => line.includes(`"path":"${API.session}"`))
          .map((line) => JSON.parse(line))
      await expect.poll(() => logged().length, { timeout: 20_000 }).toBe(1)
      expect(logged()[0].duration_ms).toBeLessThan(10_000)
    } finally {
      await client.dispose()
    }
  })

  test('a value that is not 0 to 10000 whole milliseconds is validation_failed, the value not repeated', async ({ request }) => {
    for (const value of ['10001', '-1', '1.5', 'soon']) {
      const error = await expectError(await request.post(API.session, { headers: { 'sandbox-delay-ms': value } }), 422, 'validation_failed')
      expect(error.details).toEqual([{ field: 'Sandbox-Delay-Ms', issue: 'must be a whole number of milliseconds from 0 to 10000' }])
    }
  })
})
