/**
 * The policy lifecycle with a clock moved by hand: the refund rules day by day (before the start,
 * pro rata from the start, nothing after the end), previews that equal the real answer and change
 * nothing, a cancelled policy's refusals, and the forced business outcomes of issue.
 */
import { describe, expect, test } from 'bun:test'
import { refundOf } from '../../src/modules/policies/refund'
import { toDayNumber } from '../../src/domain/dates'
import { START_MS, inProcessApp, tripFrom, expectFailure } from './support/app'

const DAY = 86_400_000

/** An app with a policy on a trip starting `offsetDays` after the fake clock's day and lasting `days` days (so `days + 1` days of cover). */
async function withPolicy(offsetDays: number, days: number, headers: Record<string, string> = {}) {
  const sandbox = await inProcessApp({ SANDBOX_SESSION_TTL_SECONDS: String(7 * 86_400) }) // long enough to see a trip end
  const trip = tripFrom(START_MS, offsetDays, days)
  const travellers = [{ age: 41 }, { age: 9 }]
  const search = await sandbox.call('plans/search', { trip, travellers, currency: 'EUR' })
  const cookie = search.cookie!
  const plan = search.body.data.plans[0]
  const issued = await sandbox.call('policy/new', { plan_id: plan.plan_id, trip, travellers }, { cookie, headers })
  const ref: string = issued.body.data?.policy_ref
  const call = (path: string, body?: unknown, extra: Record<string, string> = {}) => sandbox.call(path, body, { cookie, headers: extra })
  return { sandbox, trip, travellers, plan, issued, ref, call, cookie }
}

describe('refund rules', () => {
  const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2027-01-10', end_date: '2027-01-19' } // 10 days of cover
  const day = (date: string) => toDayNumber(date)!

  test('before the start date: the whole premium', () => {
    expect(refundOf(trip, 10_001, day('2027-01-09'))).toEqual({ rule: 'full_before_start', refundMinor: 10_001, unusedDays: 10, coverDays: 10 })
  })

  test('from the start date: the unused whole days pro rata, the day of cancelling counted as used, rounded down', () => {
    expect(refundOf(trip, 10_001, day('2027-01-10'))).toEqual({ rule: 'pro_rata_unused_days', refundMinor: 9_000, unusedDays: 9, coverDays: 10 })
    expect(refundOf(trip, 10_001, day('2027-01-17'))).toEqual({ rule: 'pro_rata_unused_days', refundMinor: 2_000, unusedDays: 2, coverDays: 10 })
    expect(refundOf(trip, 10_001, day('2027-01-19'))).toEqual({ rule: 'pro_rata_unused_days', refundMinor: 0, unusedDays: 0, coverDays: 10 })
  })

  test('after the end date: nothing', () => {
    expect(refundOf(trip, 10_001, day('2027-01-20'))).toEqual({ rule: 'none_after_end', refundMinor: 0, unusedDays: 0, coverDays: 10 })
  })
})

describe('cancellation (fake clock)', () => {
  test('a preview answers the refund and changes nothing; the cancel that follows on the same day gives the same refund', async () => {
    const { sandbox, ref, call, issued } = await withPolicy(3, 9)
    const preview = await call(`policy/${ref}/cancel`, { preview: true })
    expect(preview.status).toBe(200)
    expect(preview.body.data).toEqual({
      preview: true,
      policy_ref: ref,
      status: 'issued',
      refund: { amount: issued.body.data.premium, currency: 'EUR', rule: 'full_before_start', unused_days: 10, cover_days: 10 },
    })
    expect((await call(`policy/${ref}/read`)).body.data.status).toBe('issued')

    sandbox.advance(60_000)
    const cancelled = await call(`policy/${ref}/cancel`)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.data).toEqual({
      policy_ref: ref,
      status: 'cancelled',
      refund: preview.body.data.refund,
      cancelled_at: new Date(sandbox.now()).toISOString(),
      cancelled_by: 'partner',
    })

    const read = (await call(`policy/${ref}/read`)).body.data
    expect(read.status).toBe('cancelled')
    expect(read.cancellation).toEqual({ cancelled_at: cancelled.body.data.cancelled_at, cancelled_by: 'partner', refund: cancelled.body.data.refund })
    expect(read.updated_at).toBe(cancelled.body.data.cancelled_at)
  })

  test('from the start date the refund is the unused whole days pro rata; after the end date nothing', async () => {
    const during = await withPolicy(2, 9) // 10 days of cover
    during.sandbox.setNow(START_MS + 5 * DAY) // the 4th day of cover: 6 days unused
    const premiumMinor = Math.round(during.issued.body.data.premium * 100)
    const partial = (await during.call(`policy/${during.ref}/cancel`)).body.data
    expect(partial.refund).toEqual({
      amount: Math.floor((premiumMinor * 6) / 10) / 100,
      currency: 'EUR',
      rule: 'pro_rata_unused_days',
      unused_days: 6,
      cover_days: 10,
    })

    const after = await withPolicy(0, 1) // today and tomorrow
    after.sandbox.setNow(START_MS + 2 * DAY)
    const nothing = (await after.call(`policy/${after.ref}/cancel`)).body.data
    expect(nothing.refund).toEqual({ amount: 0, currency: 'EUR', rule: 'none_after_end', unused_days: 0, cover_days: 2 })
  })

  test('a cancelled policy cannot be modified or cancelled again (409 policy_cancelled); read-back and history stay', async () => {
    const { ref, call, trip } = await withPolicy(3, 5)
    const extended = new Date(Date.parse(trip.end_date) + 2 * DAY).toISOString().slice(0, 10)
    expect((await call(`policy/${ref}/modify`, { scenario: 'extend_end_date', new_end_date: extended })).status).toBe(200)
    expect((await call(`policy/${ref}/cancel`, {})).status).toBe(200)
    for (const [path, body] of [
      ['modify', { scenario: 'correct_partner_reference', partner_reference: 'X' }],
      ['modify', { scenario: 'correct_partner_reference', partner_reference: 'X', preview: true }],
      ['cancel', {}],
      ['cancel', { preview: true }],
    ] as const) {
      const refused = await call(`policy/${ref}/${path}`, body)
      expect({ path, status: refused.status, code: refused.body.error?.code }).toEqual({ path, status: 409, code: 'policy_cancelled' })
    }
    const read = (await call(`policy/${ref}/read`)).body.data
    expect(read.endorsements).toHaveLength(1)
    expect(read.status).toBe('cancelled')
  })

  test('with an Idempotency-Key, {}, an empty body and {"preview": false} are the same cancel', async () => {
    const { ref, call } = await withPolicy(3, 5)
    const key = { 'idempotency-key': 'cancel-once' }
    const first = await call(`policy/${ref}/cancel`, {}, key)
    expect(first.status).toBe(200)
    for (const body of [undefined, { preview: false }]) {
      const again = await call(`policy/${ref}/cancel`, body, key)
      expect(again.status).toBe(200)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.body.data).toEqual(first.body.data)
    }
  })

  test('an unknown field in the cancel body is validation_failed', async () => {
    const { ref, call } = await withPolicy(3, 5)
    const refused = await call(`policy/${ref}/cancel`, { preview: true, reason: 'changed plans' })
    expectFailure(refused, 422, 'validation_failed')
  })
})

describe('modify preview (fake clock)', () => {
  test('answers the changed field, the new premium and premium_change, writes nothing, and equals the real modify', async () => {
    const { ref, call, trip } = await withPolicy(3, 5)
    const extended = new Date(Date.parse(trip.end_date) + 4 * DAY).toISOString().slice(0, 10)
    const preview = await call(`policy/${ref}/modify`, { scenario: 'extend_end_date', new_end_date: extended, preview: true })
    expect(preview.status).toBe(200)
    expect(preview.body.data.preview).toBe(true)
    expect(preview.body.data.endorsement).toBeUndefined()
    const untouched = (await call(`policy/${ref}/read`)).body.data
    expect(untouched.trip.end_date).toBe(trip.end_date)
    expect(untouched.endorsements).toEqual([])

    const real = (await call(`policy/${ref}/modify`, { scenario: 'extend_end_date', new_end_date: extended })).body.data
    const { preview: _flag, ...previewed } = preview.body.data
    const { endorsement, ...applied } = real
    expect(previewed).toEqual(applied)
    expect(endorsement.sequence).toBe(1)
  })
})

describe('business outcomes on issue (fake clock)', () => {
  test('insurer_declined: 422, nothing written', async () => {
    const { issued, sandbox } = await withPolicy(3, 5, { 'sandbox-outcome': 'insurer_declined' })
    expectFailure(issued, 422, 'insurer_declined')
    expect(sandbox.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM policies').get()!.n).toBe(0)
  })

  test('price_changed: 409 with the premium at bind; the issue that accepts it succeeds at that premium', async () => {
    const { issued, call, plan, trip, travellers } = await withPolicy(3, 5, { 'sandbox-outcome': 'price_changed' })
    expectFailure(issued, 409, 'price_changed')
    const atBind = Math.round(Math.round(plan.premium * 100) * 1.05) / 100
    expect(issued.body.error.details).toEqual([{ field: 'expected_premium', issue: `must be ${atBind.toFixed(2)}, the premium at bind, to accept it` }])
    const body = { plan_id: plan.plan_id, trip, travellers }
    const stillOld = await call('policy/new', { ...body, expected_premium: plan.premium }, { 'sandbox-outcome': 'price_changed' })
    expect(stillOld.body.error?.code).toBe('price_changed')
    const accepted = await call('policy/new', { ...body, expected_premium: atBind }, { 'sandbox-outcome': 'price_changed' })
    expect(accepted.status).toBe(200)
    expect(accepted.body.data.premium).toBe(atBind)
  })

  test('expected_premium without a forced outcome: the quoted premium binds, another one is price_changed', async () => {
    const { call, plan, trip, travellers } = await withPolicy(3, 5)
    const body = { plan_id: plan.plan_id, trip, travellers }
    expect((await call('policy/new', { ...body, expected_premium: plan.premium + 1 })).body.error.code).toBe('price_changed')
    // Not merely rounding to it.
    expect((await call('policy/new', { ...body, expected_premium: plan.premium + 0.004 })).body.error.code).toBe('price_changed')
    expect((await call('policy/new', { ...body, expected_premium: plan.premium })).status).toBe(200)
  })

  test('document_pending: the certificate is pending until ready_at, then ready; the download says document_not_ready meanwhile', async () => {
    const { issued, sandbox, ref, call, cookie } = await withPolicy(3, 5, { 'sandbox-outcome': 'document_pending' })
    expect(issued.status).toBe(200)
    const [certificate] = issued.body.data.documents
    expect(certificate.state).toBe('pending')
    const readyAt = Date.parse(certificate.ready_at)
    expect(readyAt).toBe(sandbox.now() + 5_000)
    const early = await call(`policy/${ref}/documents/policy_certificate`)
    expectFailure(early, 409, 'document_not_ready')
    expect(early.headers.get('retry-after')).toBe('5')

    sandbox.setNow(readyAt)
    expect((await call(`policy/${ref}/read`)).body.data.documents[0].state).toBe('ready')
    const response = await sandbox.app.handle(
      new Request(`http://localhost/api/sandbox/policy/${ref}/documents/policy_certificate`, {
        method: 'POST',
        headers: { cookie: `sbx_session=${cookie}` },
      }),
    )
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/pdf')
  })

  test('a business outcome is refused on a route that has none', async () => {
    const { ref, call } = await withPolicy(3, 5)
    const refused = await call(`policy/${ref}/read`, undefined, { 'sandbox-outcome': 'document_pending' })
    expect(refused.status).toBe(422)
    expect(refused.body.error.details[0].field).toBe('Sandbox-Outcome')
  })
})
