import { describe, expect, test } from 'bun:test'
import { fromDayNumber, isoTimestamp, todayDayNumber, toDayNumber, toInstant } from '../../src/domain/dates'

describe('toDayNumber: real calendar dates only', () => {
  test('accepts a leap day in a leap year and refuses it otherwise', () => {
    expect(toDayNumber('2028-02-29')).not.toBeNull()
    expect(toDayNumber('2027-02-29')).toBeNull()
    expect(toDayNumber('2100-02-29')).toBeNull() // century, not a leap year
    expect(toDayNumber('2000-02-29')).not.toBeNull() // divisible by 400
  })

  test.each(['2026-13-01', '2026-00-10', '2026-04-31', '2026-02-30', '2026-06-00', '2026-06-32'])('refuses %s', (date) => {
    expect(toDayNumber(date)).toBeNull()
  })

  test.each(['2026-6-1', '26-06-01', '2026/06/01', '2026-06-01T00:00:00Z', ' 2026-06-01', '2026-06-01 ', '2026-06-01\n', '', 'tomorrow'])(
    'refuses the malformed %p',
    (date) => {
      expect(toDayNumber(date)).toBeNull()
    },
  )

  test('counts days since 1970-01-01', () => {
    expect(toDayNumber('1970-01-01')).toBe(0)
    expect(toDayNumber('1970-01-02')).toBe(1)
    expect(toDayNumber('2026-01-01')).toBe(Date.UTC(2026, 0, 1) / 86_400_000)
  })
})

describe('day arithmetic', () => {
  test('whole days between dates, across month ends and leap days', () => {
    expect(toDayNumber('2026-03-01')! - toDayNumber('2026-02-28')!).toBe(1)
    expect(toDayNumber('2028-03-01')! - toDayNumber('2028-02-28')!).toBe(2)
    expect(toDayNumber('2027-01-01')! - toDayNumber('2026-01-01')!).toBe(365)
    expect(toDayNumber('2029-01-01')! - toDayNumber('2028-01-01')!).toBe(366)
  })

  test('fromDayNumber is the inverse of toDayNumber', () => {
    for (const date of ['1970-01-01', '2026-12-31', '2028-02-29', '2027-03-01']) {
      expect(fromDayNumber(toDayNumber(date)!)).toBe(date)
    }
    expect(fromDayNumber(toDayNumber('2026-12-31')! + 1)).toBe('2027-01-01')
    expect(fromDayNumber(toDayNumber('2028-02-28')! + 1)).toBe('2028-02-29')
  })
})

describe('today from a clock', () => {
  test('is the UTC calendar day of the clock reading', () => {
    const day = toDayNumber('2026-11-22')!
    expect(todayDayNumber(Date.parse('2026-11-22T00:00:00.000Z'))).toBe(day)
    expect(todayDayNumber(Date.parse('2026-11-22T23:59:59.999Z'))).toBe(day)
    expect(todayDayNumber(Date.parse('2026-11-23T00:00:00.000Z'))).toBe(day + 1)
    // A time zone offset does not move "today" off UTC.
    expect(todayDayNumber(Date.parse('2026-11-23T01:00:00+05:30'))).toBe(day)
  })

  test('isoTimestamp is ISO 8601 UTC with milliseconds and Z', () => {
    expect(isoTimestamp(Date.parse('2026-11-22T10:15:00Z'))).toBe('2026-11-22T10:15:00.000Z')
  })
})

test('an instant is read only with its zone, on a real date and time', () => {
  expect(toInstant('2026-11-27T09:00:00Z')).toBe(Date.UTC(2026, 10, 27, 9))
  expect(toInstant('2026-11-27T14:30:00.250+05:30')).toBe(Date.UTC(2026, 10, 27, 9, 0, 0, 250))
  for (const text of ['2026-11-27T09:00:00', '2026-02-30T10:00:00Z', '2026-11-27T24:00:00Z', '2026-11-27', 'yesterday', '"2026-11-27T09:00:00Z"']) {
    expect(toInstant(text)).toBeNull()
  }
})
