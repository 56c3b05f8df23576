/**
 * @module Request schemas shared by plan search and policy issue. `x-issue` on a schema is the text a
 * partner sees in `error.details[].issue` when a value breaks it.
 */
import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { MAX_START_AHEAD_DAYS, MAX_TRIP_DAYS } from '../../domain/trip'

export const CountryCode = t.String({
  pattern: '^[A-Z]{2}$',
  description: 'ISO 3166-1 alpha-2 country code, upper case.',
  'x-issue': 'must be an ISO 3166-1 alpha-2 country code in upper case',
})

export const CalendarDate = t.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
  description: 'Calendar date, YYYY-MM-DD.',
  'x-issue': 'must be a date in the form YYYY-MM-DD',
})

export const TripModel = t.Object(
  {
    origin_country: CountryCode,
    destination_country: CountryCode,
    start_date: CalendarDate,
    end_date: CalendarDate,
  },
  {
    additionalProperties: false,
    description:
      `The trip: countries and the first and last day of cover. In a request, \`start_date\` is from today (UTC, on the session's clock) to ${MAX_START_AHEAD_DAYS} days ` +
      `ahead, and \`end_date\` from \`start_date\` to ${MAX_TRIP_DAYS} days after it (else \`trip_too_long\`).`,
    'x-issue': 'must be an object',
  },
)

export const TravellerModel = t.Object(
  // TypeBox's own Integer: Elysia's t.Integer also accepts integer-shaped strings such as "30".
  { age: Type.Integer({ minimum: 0, maximum: 110, description: 'Age in whole years.', 'x-issue': 'must be a whole number from 0 to 110' }) },
  { additionalProperties: false, description: 'A traveller: the age is the only attribute accepted.', 'x-issue': 'must be an object with only an age' },
)

export const TravellersModel = t.Array(TravellerModel, {
  minItems: 1,
  description: 'Travellers, ages only: 1 to 6.',
  'x-issue': 'must be a list of 1 to 6 travellers',
})

export const CurrencyCode = t.String({
  pattern: '^[A-Z]{3}$',
  description: 'ISO 4217 currency code, upper case.',
  'x-issue': 'must be an ISO 4217 currency code in upper case',
})
