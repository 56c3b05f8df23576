/**
 * @module The four correction scenarios (domain/scenarios.ts): what each may change.
 * Pure rules on a policy's current trip; pricing and storage are the service's business.
 */
import { ApiError, throwIfInvalid, type ErrorDetail, type ErrorWording } from '../../errors'
import { isAssignedCountry } from '../../domain/countries'
import { fromDayNumber, toDayNumber } from '../../domain/dates'
import { enforceTripLength, type Trip } from '../../domain/trip'
import type { ModifyRequest } from './model'

export interface Correction {
  trip: Trip
  partnerReference: string | null
  /** The changed field with its old and new value, kept as the endorsement's history. */
  changes: Record<string, { from: string | null; to: string }>
}

/**
 * `validation_failed` for a value its schema cannot refuse: a date not on the calendar, a country
 * code not assigned. (The schema already holds each scenario to exactly its own field.)
 */
export function checkScenarioFields(request: ModifyRequest): void {
  const problems: ErrorDetail[] = []
  if ('new_end_date' in request && toDayNumber(request.new_end_date) === null) {
    problems.push({ field: 'new_end_date', issue: 'must be a real calendar date (YYYY-MM-DD)' })
  }
  if ('destination_country' in request && !isAssignedCountry(request.destination_country)) {
    problems.push({ field: 'destination_country', issue: 'must be an assigned ISO 3166-1 alpha-2 country code' })
  }
  throwIfInvalid(problems)
}

type NotApplicable = ErrorWording<'scenario_not_applicable'>['variant']

const notApplicable = (variant: NotApplicable, field: string, issue: string) =>
  new ApiError('scenario_not_applicable', { variant, details: [{ field, issue }] })

/** The policy's trip and reference after the correction, or why the correction does not fit. */
export function applyScenario(current: { trip: Trip; partnerReference: string | null }, request: ModifyRequest, today: number): Correction {
  const { trip } = current
  // Once cover has ended (on the session's clock), the trip is history: only the partner reference may change.
  if (request.scenario !== 'correct_partner_reference' && today > toDayNumber(trip.end_date)!) {
    throw notApplicable('coverEnded', 'scenario', `cover ended on ${trip.end_date}`)
  }
  switch (request.scenario) {
    case 'extend_end_date':
    case 'shorten_end_date': {
      const to = request.new_end_date
      const [end, next, start] = [toDayNumber(trip.end_date)!, toDayNumber(to)!, toDayNumber(trip.start_date)!]
      if (request.scenario === 'extend_end_date' && next <= end) {
        throw notApplicable('extendEarlier', 'new_end_date', `must be after ${trip.end_date}`)
      }
      if (request.scenario === 'shorten_end_date' && (next >= end || next < start)) {
        throw notApplicable('shortenOutside', 'new_end_date', `must be from ${trip.start_date} to the day before ${trip.end_date}`)
      }
      if (next < today) throw notApplicable('endBeforeToday', 'new_end_date', `must not be before ${fromDayNumber(today)}`)
      enforceTripLength(trip.start_date, to)
      return { ...current, trip: { ...trip, end_date: to }, changes: { end_date: { from: trip.end_date, to } } }
    }
    case 'correct_destination': {
      const to = request.destination_country
      refuseNoChange(trip.destination_country, to, 'sameDestination', 'destination_country', 'the current destination')
      return { ...current, trip: { ...trip, destination_country: to }, changes: { destination_country: { from: trip.destination_country, to } } }
    }
    case 'correct_partner_reference': {
      const to = request.partner_reference
      refuseNoChange(current.partnerReference, to, 'samePartnerReference', 'partner_reference', 'the current partner_reference')
      return { ...current, partnerReference: to, changes: { partner_reference: { from: current.partnerReference, to } } }
    }
  }
}

/** `scenario_not_applicable` for a correction that would change nothing. */
function refuseNoChange(from: string | null, to: string, variant: NotApplicable, field: string, currently: string): void {
  if (to === from) throw notApplicable(variant, field, `must differ from ${currently}`)
}
