import { describe, expect, test } from 'bun:test'
import fixture from '../../data/catalogue.json'
import type { Trip } from '../../src/domain/trip'
import { loadCatalogue } from '../../src/modules/plans/catalogue'
import { coverDays, priceCatalogue, regionOf, type PricedPlan } from '../../src/modules/plans/pricing'

const catalogue = loadCatalogue()
const trip = (destination: string, origin = 'IN', start = '2026-07-01', end = '2026-07-10'): Trip => ({
  origin_country: origin,
  destination_country: destination,
  start_date: start,
  end_date: end,
})
const products = (priced: PricedPlan[]) => priced.map((p) => p.product).sort()
const byProduct = (priced: PricedPlan[], product: string) => priced.find((p) => p.product === product)!.plan

describe('catalogue fixture', () => {
  test('loads, and a broken fixture is refused rather than priced', () => {
    expect(catalogue.plans.length).toBeGreaterThanOrEqual(3)
    const broken = structuredClone(fixture) as unknown as { plans: { daily_rate_inr: Record<string, number> }[] }
    broken.plans[0]!.daily_rate_inr.domestic = -1
    expect(() => loadCatalogue(broken)).toThrow(/catalogue\.json is invalid/)
  })

  test('offers at least the contract currencies', () => {
    for (const code of ['INR', 'USD', 'EUR', 'GBP', 'AED', 'SGD']) expect(Object.keys(catalogue.currencies)).toContain(code)
  })
})

describe('determinism', () => {
  test('the same trip, ages and currency give identical plans, ids, prices and order', () => {
    const a = priceCatalogue(catalogue, trip('TH'), [30, 34], 'USD')
    const b = priceCatalogue(structuredClone(catalogue), { ...trip('TH') }, [30, 34], 'USD')
    expect(a.length).toBeGreaterThan(0)
    expect(b).toEqual(a)
  })

  test('a repeated search is answered from memory with the same plans; reordering one answer changes no other', () => {
    const first = priceCatalogue(catalogue, trip('JP'), [41], 'EUR')
    const again = priceCatalogue(catalogue, trip('JP'), [41], 'EUR')
    expect(again).toEqual(first)
    first.reverse()
    expect(priceCatalogue(catalogue, trip('JP'), [41], 'EUR')).toEqual(again)
    // Another catalogue is priced by its own rules, never from what this one answered.
    const cheaper = structuredClone(catalogue)
    for (const plan of cheaper.plans) plan.policy_fee_inr = 0
    expect(priceCatalogue(cheaper, trip('JP'), [41], 'EUR').map((p) => p.premiumMinor)).not.toEqual(again.map((p) => p.premiumMinor))
  })

  test('plan ids are stable digests (same value on every runtime and after restart)', () => {
    const plans = priceCatalogue(catalogue, trip('TH'), [30], 'INR').map((p) => p.plan.plan_id)
    for (const id of plans) expect(id).toMatch(/^plan_[a-z_]+_[0-9a-f]{12}$/)
    expect(new Set(plans).size).toBe(plans.length)
  })

  test('a different currency, trip or ages gives different plan ids', () => {
    const ids = (t: Trip, ages: number[], currency: string) => priceCatalogue(catalogue, t, ages, currency).map((p) => p.plan.plan_id)
    const base = ids(trip('TH'), [30], 'INR')
    const others = [
      ids(trip('TH'), [30], 'USD'),
      ids(trip('TH'), [31], 'INR'),
      ids(trip('TH'), [30, 30], 'INR'),
      ids(trip('TH', 'IN', '2026-07-01', '2026-07-11'), [30], 'INR'),
      ids(trip('TH', 'IN', '2026-07-02', '2026-07-10'), [30], 'INR'),
      ids(trip('TH', 'AE'), [30], 'INR'),
      ids(trip('SG'), [30], 'INR'),
    ]
    for (const other of others) for (const id of other) expect(base).not.toContain(id)
  })
})

describe('order', () => {
  test('premium ascending, then plan_id', () => {
    for (const [t, ages] of [
      [trip('FR'), [30]],
      [trip('TH'), [8, 45, 70]],
      [trip('IN'), [30]],
      [trip('US'), [1, 2]],
    ] as const) {
      const plans = priceCatalogue(catalogue, t, [...ages], 'INR').map((p) => p.plan)
      for (let i = 1; i < plans.length; i++) {
        const [prev, next] = [plans[i - 1]!, plans[i]!]
        expect(prev.premium < next.premium || (prev.premium === next.premium && prev.plan_id < next.plan_id)).toBe(true)
      }
    }
  })

  test('equal premiums are ordered by plan_id', () => {
    const twin = structuredClone(catalogue)
    const copy = structuredClone(twin.plans.find((p) => p.product === 'intl_standard')!)
    twin.plans.push({ ...copy, product: 'aaa_twin' }, { ...copy, product: 'zzz_twin' })
    const plans = priceCatalogue(twin, trip('FR'), [30], 'INR').map((p) => p.plan)
    const tied = plans.filter((p) => p.premium === plans.find((q) => q.plan_id.startsWith('plan_intl_standard_'))!.premium)
    expect(tied).toHaveLength(3)
    expect(tied.map((p) => p.plan_id)).toEqual(tied.map((p) => p.plan_id).sort())
  })
})

describe('eligibility', () => {
  test('a domestic trip gets only domestic plans', () => {
    const plans = priceCatalogue(catalogue, trip('IN'), [30], 'INR')
    const domestic = catalogue.plans
      .filter((p) => p.scope === 'domestic')
      .map((p) => p.product)
      .sort()
    expect(products(plans)).toEqual(domestic)
  })

  test('an international trip gets no domestic plan', () => {
    const international = catalogue.plans.filter((p) => p.scope === 'international').map((p) => p.product)
    for (const destination of ['FR', 'TH', 'US', 'BR']) {
      const found = products(priceCatalogue(catalogue, trip(destination), [30], 'INR'))
      expect(found.length).toBeGreaterThan(0)
      for (const product of found) expect(international).toContain(product)
    }
  })

  test('regional plans only cover their region', () => {
    expect(products(priceCatalogue(catalogue, trip('TH'), [30], 'INR'))).toContain('asia_saver')
    expect(products(priceCatalogue(catalogue, trip('FR'), [30], 'INR'))).not.toContain('asia_saver')
    // North America is priced only by plans that list it.
    expect(products(priceCatalogue(catalogue, trip('US'), [30], 'INR'))).toEqual(['intl_premium', 'intl_standard'])
    // A country in no region falls back to rest_of_world.
    expect(regionOf(catalogue, trip('BR'))).toBe('rest_of_world')
    expect(regionOf(catalogue, trip('CA'))).toBe('north_america')
    expect(regionOf(catalogue, trip('JP', 'JP'))).toBe('domestic')
  })

  test('a plan is excluded when any traveller is above its max_age, and kept at exactly max_age', () => {
    const asiaSaver = catalogue.plans.find((p) => p.product === 'asia_saver')!
    expect(products(priceCatalogue(catalogue, trip('TH'), [30, asiaSaver.max_age], 'INR'))).toContain('asia_saver')
    expect(products(priceCatalogue(catalogue, trip('TH'), [30, asiaSaver.max_age + 1], 'INR'))).not.toContain('asia_saver')
    // Above every band but the oldest: only plans with a high enough max_age remain.
    const found = products(priceCatalogue(catalogue, trip('TH'), [84], 'INR'))
    expect(found).toEqual(
      catalogue.plans
        .filter((p) => p.scope === 'international' && p.max_age >= 84)
        .map((p) => p.product)
        .sort(),
    )
    expect(priceCatalogue(catalogue, trip('TH'), [86], 'INR')).toEqual([])
  })

  test('older travellers pay more for the same plan', () => {
    const premium = (age: number) => byProduct(priceCatalogue(catalogue, trip('FR'), [age], 'INR'), 'intl_premium').premium
    expect(premium(10)).toBeLessThan(premium(30))
    expect(premium(30)).toBeLessThan(premium(50))
    expect(premium(50)).toBeLessThan(premium(65))
    expect(premium(65)).toBeLessThan(premium(75))
    expect(premium(17)).toBeLessThan(premium(18)) // band edge
  })
})

describe('regional pricing', () => {
  test('north_america costs more than europe, which costs more than asia, for the same plan', () => {
    for (const product of ['intl_standard', 'intl_premium']) {
      const price = (destination: string) => byProduct(priceCatalogue(catalogue, trip(destination), [30], 'INR'), product).premium
      expect(price('US')).toBeGreaterThan(price('FR'))
      expect(price('FR')).toBeGreaterThan(price('TH'))
    }
  })

  test('a longer trip costs more; cover days count both ends', () => {
    expect(coverDays(trip('FR', 'IN', '2026-07-01', '2026-07-01'))).toBe(1)
    expect(coverDays(trip('FR', 'IN', '2026-07-01', '2026-07-10'))).toBe(10)
    const price = (end: string) => byProduct(priceCatalogue(catalogue, trip('FR', 'IN', '2026-07-01', end), [30], 'INR'), 'intl_standard').premium
    expect(price('2026-07-02')).toBeGreaterThan(price('2026-07-01'))
  })

  test('premium = daily rate × days × age factor per traveller + policy fee (INR)', () => {
    // intl_standard to Europe, 10 days, one traveller aged 30 (factor 1.0): 230 × 10 + 149.
    expect(byProduct(priceCatalogue(catalogue, trip('FR'), [30], 'INR'), 'intl_standard').premium).toBe(2449)
    // Two travellers, 10 and 50 (factors 0.6 and 1.4): 230 × 10 × 2.0 + 149.
    expect(byProduct(priceCatalogue(catalogue, trip('FR'), [10, 50], 'INR'), 'intl_standard').premium).toBe(4749)
  })
})

describe('currencies and minor units', () => {
  const currencies = Object.keys(catalogue.currencies)
  const decimals = (value: number) => (String(value).split('.')[1] ?? '').length

  test('every amount is rounded to its currency minor unit', () => {
    for (const currency of currencies) {
      for (const [t, ages] of [
        [trip('FR'), [30]],
        [trip('US', 'IN', '2026-07-01', '2026-09-13'), [3, 44, 61, 72]],
        [trip('IN'), [17]],
      ] as const) {
        for (const { plan } of priceCatalogue(catalogue, t, [...ages], currency)) {
          expect(plan.currency).toBe(currency)
          const unit = catalogue.currencies[currency]!.minor_unit
          expect(decimals(plan.premium)).toBeLessThanOrEqual(unit)
          expect(decimals(plan.sum_insured)).toBeLessThanOrEqual(unit)
          expect(plan.premium).toBeGreaterThan(0)
        }
      }
    }
  })

  test('JPY amounts are whole numbers', () => {
    const plans = priceCatalogue(catalogue, trip('JP', 'IN', '2026-07-01', '2026-07-08'), [33, 7], 'JPY')
    expect(plans.length).toBeGreaterThan(0)
    for (const { plan } of plans) {
      expect(Number.isInteger(plan.premium)).toBe(true)
      expect(Number.isInteger(plan.sum_insured)).toBe(true)
    }
  })

  test('conversion follows the catalogue rate and keeps the order', () => {
    const inr = priceCatalogue(catalogue, trip('FR'), [30], 'INR')
    const usd = priceCatalogue(catalogue, trip('FR'), [30], 'USD')
    expect(usd.map((p) => p.product)).toEqual(inr.map((p) => p.product))
    for (let i = 0; i < inr.length; i++) {
      expect(usd[i]!.plan.premium).toBeCloseTo(inr[i]!.plan.premium * catalogue.currencies.USD!.per_inr, 2)
      expect(usd[i]!.plan.sum_insured).toBeCloseTo(inr[i]!.plan.sum_insured * catalogue.currencies.USD!.per_inr, 2)
    }
  })
})

describe('plan content', () => {
  test('a plan carries exactly the fields of spec 2.5, all from our own catalogue', () => {
    const names = new Set(catalogue.plans.map((p) => p.name))
    const benefits = new Set(catalogue.plans.flatMap((p) => p.benefits_summary))
    for (const destination of ['IN', 'FR', 'TH', 'US', 'BR']) {
      for (const { plan, product } of priceCatalogue(catalogue, trip(destination), [30], 'EUR')) {
        expect(Object.keys(plan).sort()).toEqual(['benefits_summary', 'cover_type', 'currency', 'name', 'plan_id', 'premium', 'sum_insured', 'tier'])
        const definition = catalogue.plans.find((p) => p.product === product)!
        expect(names).toContain(plan.name)
        expect(plan.name).toBe(definition.name)
        expect(['essential', 'standard', 'premium']).toContain(plan.tier)
        expect(plan.cover_type).toBe('single_trip')
        expect(plan.benefits_summary).toEqual(definition.benefits_summary)
        for (const benefit of plan.benefits_summary) expect(benefits).toContain(benefit)
        expect(plan.plan_id.startsWith(`plan_${product}_`)).toBe(true)
        expect(typeof plan.premium).toBe('number')
        expect(typeof plan.sum_insured).toBe('number')
      }
    }
  })
})
