/**
 * @module Rules on a trip and its travellers beyond their JSON shape: real dates in the right
 * order, assigned countries, and the contract's limits (180 days, 6 travellers, catalogue currency).
 */
import { ApiError, childPath, throwIfInvalid, type ErrorDetail } from '../errors'
import { isAssignedCountry } from './countries'
import { toDayNumber } from './dates'

export const MAX_TRIP_DAYS = 180
export const MAX_TRAVELLERS = 6
export const MAX_START_AHEAD_DAYS = 365

export interface Trip {
  origin_country: string
  destination_country: string
  start_date: string
  end_date: string
}

export interface TripRequest {
  trip: Trip
  travellers: { age: number }[]
  currency?: string
}

/** Everything wrong with a trip that its schema cannot see, as details under `trip.`. */
export function tripProblems(trip: Trip, today: number): ErrorDetail[] {
  const problems: ErrorDetail[] = []
  const at = (field: string) => childPath('trip', field)
  for (const field of ['origin_country', 'destination_country'] as const) {
    if (!isAssignedCountry(trip[field])) problems.push({ field: at(field), issue: 'must be an assigned ISO 3166-1 alpha-2 country code' })
  }
  const start = toDayNumber(trip.start_date)
  const end = toDayNumber(trip.end_date)
  if (start === null) problems.push({ field: at('start_date'), issue: 'must be a real calendar date (YYYY-MM-DD)' })
  else if (start < today) problems.push({ field: at('start_date'), issue: 'must not be before today (UTC)' })
  else if (start > today + MAX_START_AHEAD_DAYS) problems.push({ field: at('start_date'), issue: `must be at most ${MAX_START_AHEAD_DAYS} days ahead` })
  if (end === null) problems.push({ field: at('end_date'), issue: 'must be a real calendar date (YYYY-MM-DD)' })
  else if (start !== null && end < start) problems.push({ field: at('end_date'), issue: 'must not be before start_date' })
  return problems
}

/** Throws `trip_too_long` when the cover runs more than 180 days past its start. */
export function enforceTripLength(startDate: string, endDate: string): void {
  const length = toDayNumber(endDate)! - toDayNumber(startDate)!
  if (length > MAX_TRIP_DAYS) {
    throw new ApiError('trip_too_long', {
      values: { maxDays: MAX_TRIP_DAYS },
      details: [{ field: 'trip.end_date', issue: `at most ${MAX_TRIP_DAYS} days after start_date` }],
    })
  }
}

/** The checks search and issue share: form first (every problem at once), then the limits. */
export function checkTripRequest(request: TripRequest, today: number, currencies: ReadonlySet<string>): void {
  throwIfInvalid(tripProblems(request.trip, today))
  if (request.travellers.length > MAX_TRAVELLERS) {
    throw new ApiError('too_many_travellers', {
      values: { max: MAX_TRAVELLERS },
      details: [{ field: 'travellers', issue: `at most ${MAX_TRAVELLERS} travellers` }],
    })
  }
  enforceTripLength(request.trip.start_date, request.trip.end_date)
  if (request.currency !== undefined && !currencies.has(request.currency)) {
    throw new ApiError('unsupported_currency', {
      values: { currencies: [...currencies] },
      details: [{ field: 'currency', issue: 'not a supported currency' }],
    })
  }
}

/** Traveller ages as a sorted list: issue compares them with the search's as a multiset. */
export function agesKey(travellers: { age: number }[]): number[] {
  return travellers.map((traveller) => traveller.age).sort((a, b) => a - b)
}
