/**
 * @module The plan catalogue fixture (`data/catalogue.json`), checked against its schema when
 * loaded so that a broken fixture stops start-up instead of answering wrong prices.
 */
import { t } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import fixture from '../../../data/catalogue.json'

const Currency = t.Object({ per_inr: t.Number({ exclusiveMinimum: 0 }), minor_unit: t.Integer({ minimum: 0, maximum: 3 }) })

const PlanDefinition = t.Object({
  product: t.String({ pattern: '^[a-z_]+$' }),
  name: t.String(),
  tier: t.Union([t.Literal('essential'), t.Literal('standard'), t.Literal('premium')]),
  cover_type: t.Literal('single_trip'),
  scope: t.Union([t.Literal('domestic'), t.Literal('international')]),
  max_age: t.Integer({ minimum: 0, maximum: 110 }),
  sum_insured_inr: t.Number({ exclusiveMinimum: 0 }),
  policy_fee_inr: t.Number({ minimum: 0 }),
  daily_rate_inr: t.Record(t.String(), t.Number({ exclusiveMinimum: 0 })),
  benefits_summary: t.Array(t.String(), { minItems: 1 }),
})

const CatalogueSchema = t.Object({
  base_currency: t.Literal('INR'),
  currencies: t.Record(t.String({ pattern: '^[A-Z]{3}$' }), Currency),
  regions: t.Record(t.String(), t.Array(t.String({ pattern: '^[A-Z]{2}$' }))),
  fallback_region: t.String(),
  age_factors: t.Array(t.Object({ max_age: t.Integer(), factor: t.Number({ exclusiveMinimum: 0 }) }), { minItems: 1 }),
  plans: t.Array(PlanDefinition, { minItems: 3 }),
})

export type Catalogue = typeof CatalogueSchema.static
export type PlanDefinition = typeof PlanDefinition.static

export function loadCatalogue(data: unknown = fixture): Catalogue {
  if (!Value.Check(CatalogueSchema, data)) {
    const first = [...Value.Errors(CatalogueSchema, data)][0]
    throw new Error(`data/catalogue.json is invalid at ${first?.path || '/'}: ${first?.message}`)
  }
  return data
}
