import { describe, expect, test } from 'bun:test'
import { refusal, thrown } from './support/errors'
import { fromDayNumber, toDayNumber } from '../../src/domain/dates'
import type { Trip } from '../../src/domain/trip'
import type { ModifyRequest } from '../../src/modules/policies/model'
import { applyScenario, checkScenarioFields } from '../../src/modules/policies/scenarios'

const START = '2026-07-01'
const plus = (date: string, days: number) => fromDayNumber(toDayNumber(date)! + days)
const trip: Trip = { origin_country: 'IN', destination_country: 'FR', start_date: START, end_date: plus(START, 9) }
const policy = { trip, partnerReference: 'BK-1' }
/** Today on the session's clock: ten days before the trip, unless a test moves it. */
const TODAY = toDayNumber(START)! - 10

describe('checkScenarioFields', () => {
  // Which field goes with which scenario is the schema's (ModifyBody) to enforce: validation-details.test.ts.
  test('a well-formed value of each scenario is accepted', () => {
    for (const request of [
      { scenario: 'extend_end_date', new_end_date: plus(START, 20) },
      { scenario: 'shorten_end_date', new_end_date: plus(START, 3) },
      { scenario: 'correct_destination', destination_country: 'DE' },
      { scenario: 'correct_partner_reference', partner_reference: 'BK-2' },
    ] as ModifyRequest[])
      expect(() => checkScenarioFields(request)).not.toThrow()
  })

  test('a date that is not on the calendar is validation_failed', () => {
    for (const date of ['2026-02-30', '2027-02-29', '2026-13-01', '2026-04-31']) {
      const error = thrown(() => checkScenarioFields({ scenario: 'extend_end_date', new_end_date: date }))
      expect(error.code).toBe('validation_failed')
      expect(error.details?.map((d) => d.field)).toEqual(['new_end_date'])
    }
    expect(() => checkScenarioFields({ scenario: 'extend_end_date', new_end_date: '2028-02-29' })).not.toThrow()
  })

  test('an unassigned country is validation_failed', () => {
    const error = thrown(() => checkScenarioFields({ scenario: 'correct_destination', destination_country: 'XX' }))
    expect(error.code).toBe('validation_failed')
    expect(error.details?.map((d) => d.field)).toEqual(['destination_country'])
    expect(JSON.stringify(error.details)).not.toContain('XX')
  })
})

describe('extend_end_date', () => {
  test('moves the end date later and records the change', () => {
    const result = applyScenario(policy, { scenario: 'extend_end_date', new_end_date: plus(START, 15) }, TODAY)
    expect(result.trip).toEqual({ ...trip, end_date: plus(START, 15) })
    expect(result.partnerReference).toBe('BK-1')
    expect(result.changes).toEqual({ end_date: { from: trip.end_date, to: plus(START, 15) } })
  })

  test('a date not after the current end is scenario_not_applicable', () => {
    for (const date of [trip.end_date, plus(trip.end_date, -1), plus(START, -10)]) {
      expect(refusal(() => applyScenario(policy, { scenario: 'extend_end_date', new_end_date: date }, TODAY))).toEqual({
        status: 422,
        code: 'scenario_not_applicable',
        fields: ['new_end_date'],
      })
    }
  })

  test('to exactly 180 days after start is allowed; 181 is trip_too_long', () => {
    expect(applyScenario(policy, { scenario: 'extend_end_date', new_end_date: plus(START, 180) }, TODAY).trip.end_date).toBe(plus(START, 180))
    expect(refusal(() => applyScenario(policy, { scenario: 'extend_end_date', new_end_date: plus(START, 181) }, TODAY))).toMatchObject({
      status: 422,
      code: 'trip_too_long',
    })
  })
})

describe('shorten_end_date', () => {
  test('moves the end date earlier, down to the start date', () => {
    expect(applyScenario(policy, { scenario: 'shorten_end_date', new_end_date: plus(trip.end_date, -1) }, TODAY).trip.end_date).toBe(plus(trip.end_date, -1))
    const toStart = applyScenario(policy, { scenario: 'shorten_end_date', new_end_date: START }, TODAY)
    expect(toStart.trip).toEqual({ ...trip, end_date: START })
    expect(toStart.changes).toEqual({ end_date: { from: trip.end_date, to: START } })
  })

  test('the current end, a later date, or a date before the start is scenario_not_applicable', () => {
    for (const date of [trip.end_date, plus(trip.end_date, 1), plus(START, -1)]) {
      const error = thrown(() => applyScenario(policy, { scenario: 'shorten_end_date', new_end_date: date }, TODAY))
      expect(error.code).toBe('scenario_not_applicable')
      expect(error.details?.map((d) => d.field)).toEqual(['new_end_date'])
    }
  })

  test('a one-day trip cannot be shortened', () => {
    const oneDay = { ...policy, trip: { ...trip, end_date: START } }
    expect(thrown(() => applyScenario(oneDay, { scenario: 'shorten_end_date', new_end_date: START }, TODAY)).code).toBe('scenario_not_applicable')
  })
})

describe('correct_destination', () => {
  test('changes only the destination', () => {
    const result = applyScenario(policy, { scenario: 'correct_destination', destination_country: 'DE' }, TODAY)
    expect(result.trip).toEqual({ ...trip, destination_country: 'DE' })
    expect(result.changes).toEqual({ destination_country: { from: 'FR', to: 'DE' } })
    expect(result.partnerReference).toBe('BK-1')
  })

  test('the current destination is scenario_not_applicable', () => {
    expect(refusal(() => applyScenario(policy, { scenario: 'correct_destination', destination_country: 'FR' }, TODAY))).toMatchObject({
      code: 'scenario_not_applicable',
      fields: ['destination_country'],
    })
  })
})

describe('correct_partner_reference', () => {
  test('sets a new reference and leaves the trip alone', () => {
    const result = applyScenario(policy, { scenario: 'correct_partner_reference', partner_reference: 'BK-2' }, TODAY)
    expect(result.partnerReference).toBe('BK-2')
    expect(result.trip).toEqual(trip)
    expect(result.changes).toEqual({ partner_reference: { from: 'BK-1', to: 'BK-2' } })
  })

  test('sets a reference on a policy issued without one', () => {
    const result = applyScenario({ trip, partnerReference: null }, { scenario: 'correct_partner_reference', partner_reference: 'BK-2' }, TODAY)
    expect(result.changes).toEqual({ partner_reference: { from: null, to: 'BK-2' } })
  })

  test('the same reference is scenario_not_applicable', () => {
    expect(refusal(() => applyScenario(policy, { scenario: 'correct_partner_reference', partner_reference: 'BK-1' }, TODAY))).toMatchObject({
      code: 'scenario_not_applicable',
      fields: ['partner_reference'],
    })
  })
})

describe("on the session's clock", () => {
  const end = toDayNumber(trip.end_date)!

  test('once cover has ended, no correction changes the trip; the partner reference still may', () => {
    for (const request of [
      { scenario: 'extend_end_date', new_end_date: plus(START, 20) },
      { scenario: 'shorten_end_date', new_end_date: plus(START, 3) },
      { scenario: 'correct_destination', destination_country: 'DE' },
    ] as ModifyRequest[]) {
      expect(refusal(() => applyScenario(policy, request, end + 1))).toMatchObject({ code: 'scenario_not_applicable', fields: ['scenario'] })
    }
    expect(applyScenario(policy, { scenario: 'correct_partner_reference', partner_reference: 'BK-2' }, end + 1).partnerReference).toBe('BK-2')
  })

  test('during the trip, cover cannot be made to end before today; on its last day it still may be extended', () => {
    const midTrip = toDayNumber(START)! + 5
    expect(refusal(() => applyScenario(policy, { scenario: 'shorten_end_date', new_end_date: plus(START, 4) }, midTrip))).toMatchObject({
      code: 'scenario_not_applicable',
      fields: ['new_end_date'],
    })
    expect(applyScenario(policy, { scenario: 'shorten_end_date', new_end_date: plus(START, 5) }, midTrip).trip.end_date).toBe(plus(START, 5))
    expect(applyScenario(policy, { scenario: 'extend_end_date', new_end_date: plus(START, 12) }, end).trip.end_date).toBe(plus(START, 12))
  })
})
