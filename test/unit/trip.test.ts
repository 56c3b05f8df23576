import { describe, expect, test } from 'bun:test'
import { refusal, thrown as apiError } from './support/errors'
import { fromDayNumber, toDayNumber } from '../../src/domain/dates'
import { agesKey, checkTripRequest, tripProblems, type Trip } from '../../src/domain/trip'

const TODAY = toDayNumber('2026-06-01')!
const day = (offset: number) => fromDayNumber(TODAY + offset)
const CURRENCIES = new Set(['INR', 'USD', 'EUR', 'GBP', 'AED', 'SGD', 'JPY'])

function trip(startOffset: number, length: number, over: Partial<Trip> = {}): Trip {
  return { origin_country: 'IN', destination_country: 'FR', start_date: day(startOffset), end_date: day(startOffset + length), ...over }
}

const travellers = (count: number) => Array.from({ length: count }, (_, i) => ({ age: 20 + i }))

const fields = (problems: { field: string }[]) => problems.map((p) => p.field).sort()

describe('tripProblems', () => {
  test('a good trip has no problems', () => {
    expect(tripProblems(trip(10, 7), TODAY)).toEqual([])
  })

  test('lists every problem at once, each under its JSON path', () => {
    const problems = tripProblems({ origin_country: 'XX', destination_country: 'ZZ', start_date: '2026-02-30', end_date: '2026-13-01' }, TODAY)
    expect(fields(problems)).toEqual(['trip.destination_country', 'trip.end_date', 'trip.origin_country', 'trip.start_date'])
    for (const problem of problems) expect(problem.issue.length).toBeGreaterThan(0)
  })

  test('never echoes the rejected values', () => {
    const bad = { origin_country: 'QQ', destination_country: 'QZ', start_date: '2031-02-31', end_date: '2031-04-31' }
    const text = JSON.stringify(tripProblems(bad, TODAY))
    for (const value of Object.values(bad)) expect(text).not.toContain(value)
  })

  test('countries must be assigned ISO 3166-1 codes', () => {
    expect(tripProblems(trip(1, 1, { destination_country: 'US' }), TODAY)).toEqual([])
    expect(fields(tripProblems(trip(1, 1, { destination_country: 'XK' }), TODAY))).toEqual(['trip.destination_country'])
    expect(fields(tripProblems(trip(1, 1, { origin_country: 'AA' }), TODAY))).toEqual(['trip.origin_country'])
  })

  test('start today is allowed, yesterday is not', () => {
    expect(tripProblems(trip(0, 3), TODAY)).toEqual([])
    expect(fields(tripProblems(trip(-1, 3), TODAY))).toEqual(['trip.start_date'])
  })

  test('start 365 days ahead is allowed, 366 is not', () => {
    expect(tripProblems(trip(365, 3), TODAY)).toEqual([])
    expect(fields(tripProblems(trip(366, 3), TODAY))).toEqual(['trip.start_date'])
  })

  test('end on the start day is allowed, the day before is not', () => {
    expect(tripProblems(trip(5, 0), TODAY)).toEqual([])
    expect(fields(tripProblems(trip(5, -1), TODAY))).toEqual(['trip.end_date'])
  })

  test('an impossible start and an end in the past are both reported', () => {
    const problems = tripProblems({ ...trip(5, 5), start_date: '2026-04-31', end_date: '2027-02-29' }, TODAY)
    expect(fields(problems)).toEqual(['trip.end_date', 'trip.start_date'])
  })
})

describe('checkTripRequest limits', () => {
  const check = (request: Parameters<typeof checkTripRequest>[0]) => checkTripRequest(request, TODAY, CURRENCIES)

  test('exactly 180 days is allowed, 181 is trip_too_long', () => {
    expect(() => check({ trip: trip(0, 180), travellers: travellers(1) })).not.toThrow()
    expect(refusal(() => check({ trip: trip(0, 181), travellers: travellers(1) }))).toEqual({ status: 422, code: 'trip_too_long', fields: ['trip.end_date'] })
  })

  test('180 days across a leap day is counted in real days', () => {
    const start = '2027-12-01'
    const end180 = fromDayNumber(toDayNumber(start)! + 180) // 2028-05-29, crosses 2028-02-29
    const today = toDayNumber('2027-11-30')!
    expect(() => checkTripRequest({ trip: { ...trip(0, 0), start_date: start, end_date: end180 }, travellers: travellers(1) }, today, CURRENCIES)).not.toThrow()
    expect(
      apiError(() => checkTripRequest({ trip: { ...trip(0, 0), start_date: start, end_date: '2028-05-30' }, travellers: travellers(1) }, today, CURRENCIES))
        .code,
    ).toBe('trip_too_long')
  })

  test('6 travellers are allowed, 7 is too_many_travellers', () => {
    expect(() => check({ trip: trip(1, 5), travellers: travellers(6) })).not.toThrow()
    expect(refusal(() => check({ trip: trip(1, 5), travellers: travellers(7) }))).toEqual({ status: 422, code: 'too_many_travellers', fields: ['travellers'] })
  })

  test('form problems are validation_failed before any limit', () => {
    const error = apiError(() => check({ trip: { ...trip(-1, 200), destination_country: 'XX' }, travellers: travellers(7), currency: 'XYZ' }))
    expect(error.code).toBe('validation_failed')
    expect(fields(error.details!)).toEqual(['trip.destination_country', 'trip.start_date'])
  })

  test('a well-formed currency outside the catalogue is unsupported_currency', () => {
    const error = apiError(() => check({ trip: trip(1, 5), travellers: travellers(1), currency: 'XYZ' }))
    expect(error.code).toBe('unsupported_currency')
    expect(error.status).toBe(422)
    expect(error.details?.map((d) => d.field)).toEqual(['currency'])
    expect(JSON.stringify(error.details)).not.toContain('XYZ')
  })

  test('every catalogue currency, and no currency, is accepted', () => {
    for (const currency of CURRENCIES) expect(() => check({ trip: trip(1, 5), travellers: travellers(1), currency })).not.toThrow()
    expect(() => check({ trip: trip(1, 5), travellers: travellers(1) })).not.toThrow()
  })
})

describe('agesKey', () => {
  test('ages compare as a multiset: order does not matter, counts do', () => {
    expect(agesKey([{ age: 40 }, { age: 5 }, { age: 40 }])).toEqual(agesKey([{ age: 5 }, { age: 40 }, { age: 40 }]))
    expect(agesKey([{ age: 40 }, { age: 5 }])).not.toEqual(agesKey([{ age: 5 }, { age: 40 }, { age: 40 }]))
    expect(agesKey([{ age: 9 }, { age: 10 }, { age: 100 }])).toEqual([9, 10, 100]) // numeric, not string, order
  })
})
