/** @module Schemas of plan search. */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { CurrencyCode, TravellersModel, TripModel } from '../trip/model'

export const SearchBody = t.Object(
  {
    trip: TripModel,
    travellers: TravellersModel,
    currency: t.Optional(CurrencyCode),
  },
  { additionalProperties: false, 'x-issue': 'must be an object' },
)

export type SearchRequest = typeof SearchBody.static

export const PlanModel = t.Object({
  plan_id: t.String({ description: 'Use it to issue a policy; the same for the same trip, ages and currency.' }),
  name: t.String({ description: 'Service-tier display name.' }),
  tier: t.UnionEnum(['essential', 'standard', 'premium']),
  currency: t.String({ description: 'ISO 4217.' }),
  sum_insured: t.Number(),
  premium: t.Number({ description: 'Indicative; never to be shown to travellers.' }),
  cover_type: t.UnionEnum(['single_trip']),
  benefits_summary: t.Array(t.String()),
})

export const SearchData = t.Object({
  trip: TripModel,
  travellers: Type.Integer({ description: 'Number of travellers.' }),
  currency: t.String(),
  plans: t.Array(PlanModel, { description: 'Every plan that fits, cheapest first, ties by plan_id.' }),
})
