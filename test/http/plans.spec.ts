import { ages, API, catalogue, definitionOf, expect, expectOk, searchBody, searchPlans, test, tripFrom } from './support/client'
import { currentTarget } from './support/server'
import { expectedMode } from './support/targets'

const PLAN_FIELDS = ['benefits_summary', 'cover_type', 'currency', 'name', 'plan_id', 'premium', 'sum_insured', 'tier'].sort()

interface Plan {
  plan_id: string
  name: string
  tier: string
  currency: string
  sum_insured: number
  premium: number
  cover_type: string
  benefits_summary: string[]
}

/** Catalogue names of the plans that should fit, from the catalogue's own eligibility rules. */
function eligibleNames(trip: { origin_country: string; destination_country: string }, travellerAges: number[]): string[] {
  const domestic = trip.origin_country === trip.destination_country
  const region = domestic
    ? 'domestic'
    : (Object.entries(catalogue.regions).find(([, countries]) => countries.includes(trip.destination_country))?.[0] ?? catalogue.fallback_region)
  return catalogue.plans
    .filter((plan) => plan.scope === (domestic ? 'domestic' : 'international'))
    .filter((plan) => plan.daily_rate_inr[region] !== undefined)
    .filter((plan) => travellerAges.every((age) => age <= plan.max_age))
    .map((plan) => plan.name)
    .sort()
}

function expectSortedByPremiumThenId(plans: Plan[]) {
  const sorted = [...plans].sort((a, b) => a.premium - b.premium || (a.plan_id < b.plan_id ? -1 : a.plan_id > b.plan_id ? 1 : 0))
  expect(plans.map((plan) => plan.plan_id)).toEqual(sorted.map((plan) => plan.plan_id))
}

test.describe('POST /api/sandbox/plans/search', () => {
  test('answers the trip as given, the traveller count, INR by default and plans with the spec fields', async ({ request }) => {
    const trip = tripFrom(10, 14, 'IN', 'FR')
    const body = await expectOk(await request.post(API.search, { data: { trip, travellers: ages(34, 31, 8) } }))
    expect(body.mode).toBe(expectedMode(currentTarget()))
    expect(Object.keys(body.data).sort()).toEqual(['currency', 'plans', 'travellers', 'trip'])
    expect(body.data.trip).toEqual(trip)
    expect(body.data.travellers).toBe(3)
    expect(body.data.currency).toBe('INR')
    expect(body.meta.sandbox).toBe(true)
    expect(body.meta.rate_limit).toEqual({ limit: 30, remaining: 29, reset_at: expect.any(String) })
    const plans: Plan[] = body.data.plans
    expect(plans.length).toBeGreaterThan(0)
    for (const plan of plans) {
      expect(Object.keys(plan).sort()).toEqual(PLAN_FIELDS)
      expect(plan.plan_id).toMatch(/^\S+$/)
      expect(typeof plan.name).toBe('string')
      expect(['essential', 'standard', 'premium']).toContain(plan.tier)
      expect(plan.currency).toBe('INR')
      expect(plan.cover_type).toBe('single_trip')
      expect(plan.premium).toBeGreaterThan(0)
      expect(plan.sum_insured).toBeGreaterThan(0)
      expect(Math.round(plan.premium * 100)).toBeCloseTo(plan.premium * 100, 6)
      expect(plan.benefits_summary.length).toBeGreaterThan(0)
      for (const benefit of plan.benefits_summary) expect(typeof benefit).toBe('string')
    }
    expect(new Set(plans.map((plan) => plan.plan_id)).size).toBe(plans.length)
    expect(plans.map((plan) => plan.name).sort()).toEqual(eligibleNames(trip, [34, 31, 8]))
    expectSortedByPremiumThenId(plans)
  })

  test('is deterministic: two sessions on two networks get identical plans, ids, prices and order', async ({ newClient }) => {
    const trip = tripFrom(20, 9, 'IN', 'TH')
    const body = searchBody(trip, ages(45, 12, 70))
    const [first, second] = [await newClient(), await newClient()]
    const one = await expectOk(await first.post(API.search, { data: body }))
    const two = await expectOk(await second.post(API.search, { data: body }))
    expect(two.data).toEqual(one.data)
    expect(one.data.plans.length).toBeGreaterThan(1)
    // Ages as a multiset: their order changes nothing.
    const reordered = await searchPlans(first, searchBody(trip, ages(70, 45, 12)))
    expect(reordered.plans).toEqual(one.data.plans)
    // And a repeat in the same session is identical too.
    expect((await searchPlans(second, body)).plans).toEqual(one.data.plans)
  })

  test('orders plans by premium ascending, then plan_id', async ({ request }) => {
    for (const destination of ['FR', 'US', 'SG', 'BR']) {
      const { plans } = await searchPlans(request, searchBody(tripFrom(5, 20, 'IN', destination), ages(30, 62)))
      expect(plans.length).toBeGreaterThan(0)
      expectSortedByPremiumThenId(plans)
      const premiums = plans.map((plan: Plan) => plan.premium)
      expect(premiums).toEqual([...premiums].sort((a, b) => a - b))
    }
  })

  test('excludes plans whose maximum age is below a traveller\u2019s age', async ({ request }) => {
    const trip = tripFrom(5, 10, 'IN', 'FR')
    const young = await searchPlans(request, searchBody(trip, ages(30)))
    expect(young.plans.length).toBeGreaterThan(0)
    const senior = await searchPlans(request, searchBody(trip, ages(30, 72)))
    expect(senior.plans.length).toBeGreaterThan(0)
    expect(senior.plans.length).toBeLessThan(young.plans.length)
    for (const plan of senior.plans) expect(definitionOf(plan).max_age).toBeGreaterThanOrEqual(72)
    expect(senior.plans.map((plan: Plan) => plan.name).sort()).toEqual(eligibleNames(trip, [30, 72]))
    const ninety = await searchPlans(request, searchBody(trip, ages(90)))
    for (const plan of ninety.plans) expect(definitionOf(plan).max_age).toBeGreaterThanOrEqual(90)
    expect(ninety.plans.map((plan: Plan) => plan.name).sort()).toEqual(eligibleNames(trip, [90]))
  })

  test('a domestic trip (origin equals destination) gets only domestic plans, an international one none', async ({ request }) => {
    const domestic = await searchPlans(request, searchBody(tripFrom(3, 5, 'IN', 'IN'), ages(40)))
    expect(domestic.plans.length).toBeGreaterThan(0)
    for (const plan of domestic.plans) expect(definitionOf(plan).scope).toBe('domestic')
    expect(domestic.plans.map((plan: Plan) => plan.name).sort()).toEqual(eligibleNames({ origin_country: 'IN', destination_country: 'IN' }, [40]))
    const abroad = await searchPlans(request, searchBody(tripFrom(3, 5, 'IN', 'JP'), ages(40)))
    expect(abroad.plans.length).toBeGreaterThan(0)
    for (const plan of abroad.plans) expect(definitionOf(plan).scope).toBe('international')
  })

  test('converts amounts to the requested currency, rounded to its minor unit (JPY has none)', async ({ request }) => {
    const trip = tripFrom(12, 8, 'IN', 'GB')
    const travellers = ages(36, 33)
    const inr = await searchPlans(request, searchBody(trip, travellers))
    const jpy = await searchPlans(request, searchBody(trip, travellers, 'JPY'))
    const usd = await searchPlans(request, searchBody(trip, travellers, 'USD'))
    expect(jpy.currency).toBe('JPY')
    expect(usd.currency).toBe('USD')
    expect(jpy.plans.map((plan: Plan) => plan.name)).toEqual(inr.plans.map((plan: Plan) => plan.name))
    const rate = (code: string) => catalogue.currencies[code]!.per_inr
    inr.plans.forEach((inrPlan: Plan, index: number) => {
      const yen: Plan = jpy.plans[index]
      const dollar: Plan = usd.plans[index]
      expect(yen.currency).toBe('JPY')
      expect(Number.isInteger(yen.premium)).toBe(true)
      expect(Number.isInteger(yen.sum_insured)).toBe(true)
      expect(Math.abs(yen.premium - inrPlan.premium * rate('JPY'))).toBeLessThanOrEqual(1)
      expect(Math.abs(yen.sum_insured - inrPlan.sum_insured * rate('JPY'))).toBeLessThanOrEqual(1)
      expect(dollar.currency).toBe('USD')
      expect(Math.round(dollar.premium * 100)).toBeCloseTo(dollar.premium * 100, 6)
      expect(Math.abs(dollar.premium - inrPlan.premium * rate('USD'))).toBeLessThanOrEqual(0.01)
    })
    // Every currency of the catalogue is accepted.
    for (const code of Object.keys(catalogue.currencies)) {
      const result = await searchPlans(request, searchBody(trip, travellers, code))
      expect(result.currency).toBe(code)
      for (const plan of result.plans) expect(plan.currency).toBe(code)
    }
  })

  test('accepts the limits themselves: 6 travellers, a 180-day trip, ages 0 and 110', async ({ request }) => {
    const six = await searchPlans(request, searchBody(tripFrom(2, 180, 'IN', 'FR'), ages(0, 1, 17, 40, 60, 65)))
    expect(six.travellers).toBe(6)
    expect(six.plans.length).toBeGreaterThan(0)
    const oldest = await searchPlans(request, searchBody(tripFrom(2, 0, 'IN', 'IN'), ages(110)))
    expect(oldest.travellers).toBe(1)
  })
})
