/** @module Schemas of plan search. */
import { t } from 'elysia'
import { CurrencyCode, TravellersModel, TripModel } from '../trip/model'

export const SearchBody = t.Object(
  {
    trip: TripModel,
    travellers: TravellersModel,
    currency: t.Optional(CurrencyCode),
  },
  { additionalProperties: false, issue: 'must be an object' },
)

export type SearchRequest = typeof SearchBody.static
