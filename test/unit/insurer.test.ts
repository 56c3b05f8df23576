import { describe, expect, test } from 'bun:test'
import { rejection } from './support/errors'
import { loadCatalogue } from '../../src/modules/plans/catalogue'
import { priceCatalogue } from '../../src/modules/plans/pricing'
import { circuitBreaker } from '../../src/modules/insurer/breaker'
import { httpInsurer } from '../../src/modules/insurer/adapter'
import type { UatConfig } from '../../src/config'
import { logLine } from '../../src/log'

const catalogue = loadCatalogue()
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2027-03-01', end_date: '2027-03-10' }
const config: UatConfig = { url: 'http://insurer.test', timeoutMs: 200, retries: 2, breakerFailures: 2, breakerCooldownSeconds: 10 }

describe('circuit breaker', () => {
  test('opens after the configured failures in a row, lets one trial through after the cooldown', () => {
    let now = 0
    const breaker = circuitBreaker({ failures: 2, cooldownMs: 1000, clock: () => now })
    breaker.failed()
    expect(breaker.allow()).toBe(true)
    breaker.failed()
    expect(breaker.state()).toBe('open')
    expect(breaker.allow()).toBe(false)
    expect(breaker.retryAfter()).toBe(1)
    now = 1000
    expect(breaker.state()).toBe('half_open')
    expect(breaker.allow()).toBe(true)
    expect(breaker.allow()).toBe(false) // one trial at a time
    breaker.failed()
    expect(breaker.state()).toBe('open') // a failed trial reopens at once
    now = 2000
    expect(breaker.allow()).toBe(true)
    breaker.succeeded()
    expect(breaker.state()).toBe('closed')
  })

  test('a success resets the count of failures in a row', () => {
    const breaker = circuitBreaker({ failures: 2, cooldownMs: 1000, clock: () => 0 })
    breaker.failed()
    breaker.succeeded()
    breaker.failed()
    expect(breaker.state()).toBe('closed')
  })
})

/** An insurer that answers from a list of canned responses (or throws for a network fault). */
function fakeInsurer(answers: (Response | Error)[]) {
  const calls: { url: string; headers: Record<string, string>; body: any }[] = []
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, headers: init.headers as Record<string, string>, body: JSON.parse(init.body as string) })
    const next = answers.shift() ?? new Error('no more answers')
    if (next instanceof Error) throw next
    return next
  }) as unknown as typeof globalThis.fetch
  const logs: string[] = []
  const insurer = httpInsurer(config, catalogue, { clock: () => 0, log: (fields) => logs.push(logLine(fields)), fetch })
  return { insurer, calls, logs }
}

const json = (status: number, body: unknown) => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status })

function insurerQuotes(currency = 'EUR') {
  const priced = priceCatalogue(catalogue, trip, [30], currency)
  const codeOf: Record<string, string> = { intl_essential: 'ACM-INT-BRONZE', intl_standard: 'ACM-INT-SILVER', intl_premium: 'ACM-INT-GOLD' }
  return {
    quotes: priced.reverse().map((plan, index) => ({
      quote_ref: `ACMQ-${index}`,
      product_code: codeOf[plan.product],
      product_label: 'Acme Globetrotter',
      tier_code: 'ACM-T9',
      cover_code: 'ST',
      currency,
      sum_insured_minor: 123_456,
      premium_minor: plan.premiumMinor,
      benefit_codes: ['ACM-MEDX-01'],
    })),
  }
}

describe('insurer adapter (generic UAT protocol)', () => {
  test('normalises quotes to our catalogue: our names, tiers, benefits and ids, our order, no insurer string', async () => {
    const { insurer, calls } = fakeInsurer([json(200, insurerQuotes())])
    const plans = await insurer.search({ trip, ages: [30], currency: 'EUR' }, 'req_1')
    const simulated = priceCatalogue(catalogue, trip, [30], 'EUR')
    expect(plans.map((p) => p.plan.plan_id)).toEqual(simulated.map((p) => p.plan.plan_id))
    expect(plans.map((p) => p.plan.name)).toEqual(simulated.map((p) => p.plan.name))
    expect(plans[0]!.plan.sum_insured).toBe(1234.56)
    expect(JSON.stringify(plans.map((p) => p.plan))).not.toMatch(/ACM|Acme/)
    expect(plans[0]!.upstreamRef).toMatch(/^ACMQ-/)
    expect(calls[0]!.url).toBe('http://insurer.test/v1/quotes')
    expect(calls[0]!.body).toEqual({ journey: { from: 'IN', to: 'FR', departs: '2027-03-01', returns: '2027-03-10' }, insured: [{ age: 30 }], currency: 'EUR' })
  })

  test('an unknown product code, a foreign currency or a broken shape is upstream_invalid, logged with the request id', async () => {
    const unknown = insurerQuotes()
    unknown.quotes[0]!.product_code = 'Acme Globetrotter Gold Elite'
    const foreign = insurerQuotes('USD')
    for (const answer of [unknown, foreign, { quotes: [{ quote_ref: 'x' }] }, '{"quotes": [']) {
      const { insurer, logs } = fakeInsurer([json(200, answer)])
      expect((await rejection(insurer.search({ trip, ages: [30], currency: 'EUR' }, 'req_42'))).code).toBe('upstream_invalid')
      expect(logs.join('\n')).toContain('req_42')
    }
  })

  test('5xx, network errors and timeouts are retried with the same idempotency key, then upstream_unavailable', async () => {
    const { insurer, calls } = fakeInsurer([
      json(503, {}),
      new TypeError('connection reset'),
      json(201, { policy_number: 'ACME-UAT-1', status: 'BOUND', currency: 'EUR', premium_minor: 100 }),
    ])
    const bound = await insurer.issue({ quoteRef: 'ACMQ-1', trip, ages: [30], currency: 'EUR' }, { requestId: 'req_1', idempotencyKey: 'k-1' })
    expect(bound).toEqual({ upstreamRef: 'ACME-UAT-1', premiumMinor: 100 })
    expect(calls.map((c) => c.headers['idempotency-key'])).toEqual(['k-1', 'k-1', 'k-1'])

    const down = fakeInsurer([json(500, {}), json(502, {}), json(503, {})])
    const error = await rejection(down.insurer.issue({ quoteRef: 'ACMQ-1', trip, ages: [30], currency: 'EUR' }, { requestId: 'req_2', idempotencyKey: 'k-2' }))
    expect(error.code).toBe('upstream_unavailable')
    expect(error.retryAfter).toBeGreaterThanOrEqual(1)
    expect(down.calls).toHaveLength(3)
  })

  test('after the configured failed calls the breaker answers upstream_unavailable without calling', async () => {
    const { insurer, calls } = fakeInsurer(Array.from({ length: 6 }, () => json(503, {})))
    for (let i = 0; i < 2; i++) await rejection(insurer.search({ trip, ages: [30], currency: 'EUR' }, 'req'))
    expect(insurer.breakerState()).toBe('open')
    const seen = calls.length
    expect((await rejection(insurer.search({ trip, ages: [30], currency: 'EUR' }, 'req'))).code).toBe('upstream_unavailable')
    expect(calls).toHaveLength(seen)
  })

  test("the insurer's refusals map to contract errors; unknown refusals are upstream_invalid and not retried", async () => {
    const notCovered = fakeInsurer([json(422, { fault: { code: 'NOT_COVERED', message: 'Acme says no' } })])
    const error = await rejection(
      notCovered.insurer.endorse(
        { upstreamRef: 'ACME-UAT-1', scenario: 'correct_destination', value: 'US', dryRun: false },
        { requestId: 'r', idempotencyKey: 'k' },
      ),
    )
    expect(error.code).toBe('scenario_not_applicable')
    expect(error.message).not.toContain('Acme')
    expect(notCovered.calls[0]!.body).toEqual({ change: 'DESTINATION', value: 'US', dry_run: false })

    const declined = fakeInsurer([json(422, { fault: { code: 'DECLINED', message: 'Acme underwriting says no' } })])
    const decline = await rejection(declined.insurer.issue({ quoteRef: 'q', trip, ages: [30], currency: 'EUR' }, { requestId: 'r', idempotencyKey: 'k' }))
    expect(decline.code).toBe('insurer_declined')
    expect(decline.message).not.toContain('Acme')

    const cancelled = fakeInsurer([json(409, { fault: { code: 'POLICY_CANCELLED' } })])
    expect((await rejection(cancelled.insurer.cancel({ upstreamRef: 'ACME-UAT-1', dryRun: true }, { requestId: 'r', idempotencyKey: 'k' }))).code).toBe(
      'policy_cancelled',
    )
    expect(cancelled.calls[0]).toMatchObject({ url: 'http://insurer.test/v1/policies/ACME-UAT-1/cancellations', body: { dry_run: true } })

    const odd = fakeInsurer([json(400, { fault: { code: 'ACME_SAYS_NO' } })])
    expect((await rejection(odd.insurer.issue({ quoteRef: 'q', trip, ages: [30], currency: 'EUR' }, { requestId: 'r', idempotencyKey: 'k' }))).code).toBe(
      'upstream_invalid',
    )
    expect(odd.calls).toHaveLength(1)
  })
})

describe('insurer adapter: answers that must not pass', () => {
  test('a search refusal is upstream_invalid, never a partner error', async () => {
    const { insurer } = fakeInsurer([json(422, { fault: { code: 'NOT_COVERED' } })])
    expect((await rejection(insurer.search({ trip, ages: [30], currency: 'EUR' }, 'r'))).code).toBe('upstream_invalid')
  })

  test('a policy bound in another currency is upstream_invalid', async () => {
    const { insurer } = fakeInsurer([json(201, { policy_number: 'ACME-UAT-1', status: 'BOUND', currency: 'JPY', premium_minor: 999_999 })])
    expect((await rejection(insurer.issue({ quoteRef: 'q', trip, ages: [30], currency: 'EUR' }, { requestId: 'r', idempotencyKey: 'k' }))).code).toBe(
      'upstream_invalid',
    )
  })

  test('a JSON null is upstream_invalid, not an outage to retry', async () => {
    const { insurer, calls } = fakeInsurer([json(200, 'null')])
    expect((await rejection(insurer.search({ trip, ages: [30], currency: 'EUR' }, 'r'))).code).toBe('upstream_invalid')
    expect(calls).toHaveLength(1)
    expect(insurer.breakerState()).toBe('closed')
  })

  test('two quotes for one product are upstream_invalid', async () => {
    const answer = insurerQuotes()
    answer.quotes.push({ ...answer.quotes[0]!, quote_ref: 'ACMQ-dup', premium_minor: 1 })
    const { insurer } = fakeInsurer([json(200, answer)])
    expect((await rejection(insurer.search({ trip, ages: [30], currency: 'EUR' }, 'r'))).code).toBe('upstream_invalid')
  })
})
