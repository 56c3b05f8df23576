import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { SearchBody } from '../../src/modules/plans/model'
import { ModifyBody } from '../../src/modules/policies/model'
import { AdvanceBody } from '../../src/modules/test-helpers/model'
import { detailsFromSchemaErrors, pointerToPath } from '../../src/http/validation-details'

describe('pointerToPath', () => {
  test.each([
    ['', '$'],
    ['/trip', 'trip'],
    ['/trip/end_date', 'trip.end_date'],
    ['/travellers/2/age', 'travellers[2].age'],
    ['/travellers/0', 'travellers[0]'],
    ['/a/0/1/b', 'a[0][1].b'],
  ])('%p → %p', (pointer, path) => {
    expect(pointerToPath(pointer)).toBe(path)
  })

  test('keys that are not identifiers are quoted, with ~1 and ~0 unescaped', () => {
    expect(pointerToPath('/first name')).toBe('"first name"')
    expect(pointerToPath('/trip/a~1b')).toBe('trip["a/b"]')
    expect(pointerToPath('/trip/x~0y')).toBe('trip["x~y"]')
  })
})

describe('detailsFromSchemaErrors', () => {
  // Errors as the schema check reports them for the real search model.
  const errorsFor = (body: unknown) => [...Value.Errors(SearchBody, body)] as unknown as Parameters<typeof detailsFromSchemaErrors>[0]

  test("one detail per field, every field, in JSON paths, with the model's own issue text", () => {
    const body = {
      trip: { origin_country: 'in', destination_country: 'FR', start_date: '2026-07-01' },
      travellers: [{ age: 30 }, { age: 1, name: 'x' }, { age: 200 }],
      extra: 1,
    }
    const details = detailsFromSchemaErrors(errorsFor(body))
    expect(details.map((d) => d.field).sort()).toEqual(['extra', 'travellers[1].name', 'travellers[2].age', 'trip.end_date', 'trip.origin_country'])
    const issue = (field: string) => details.find((d) => d.field === field)!.issue
    expect(issue('trip.end_date')).toBe('is required')
    expect(issue('extra')).toBe('is not an accepted field')
    expect(issue('travellers[1].name')).toBe('is not an accepted field')
    expect(issue('travellers[2].age')).toMatch(/whole number from 0 to 110/)
    expect(issue('trip.origin_country')).toMatch(/ISO 3166-1 alpha-2/)
  })

  test('an unknown field whose name is not a plain identifier of at most 64 characters is reported on its object, unnamed', () => {
    const long = 'a'.repeat(65)
    const body = {
      trip: { origin_country: 'IN', destination_country: 'FR', start_date: '2026-07-01', end_date: '2026-07-05' },
      travellers: [{ age: 30, 'Ravi Kumar +91 98765 43210': 1, [long]: 2 }],
      ['x'.repeat(64)]: 3,
    }
    const details = detailsFromSchemaErrors(errorsFor(body))
    expect(details).toHaveLength(2)
    expect(details).toContainEqual({ field: 'travellers[0]', issue: 'has a field that is not accepted (its name is not repeated)' })
    expect(details).toContainEqual({ field: 'x'.repeat(64), issue: 'is not an accepted field' })
    expect(JSON.stringify(details)).not.toContain('Ravi')
  })

  test('never echoes a submitted value', () => {
    const body = {
      trip: { origin_country: 'zz-secret', destination_country: 'FR', start_date: 'nope-secret', end_date: '2026-07-09' },
      travellers: [{ age: 'old-secret' }],
      currency: 'secret-cur',
    }
    const details = detailsFromSchemaErrors(errorsFor(body))
    expect(details.length).toBeGreaterThanOrEqual(4)
    expect(JSON.stringify(details)).not.toContain('secret')
  })

  test('a body that is not an object is reported at $', () => {
    expect(detailsFromSchemaErrors(errorsFor([1, 2])).map((d) => d.field)).toEqual(['$'])
  })
})

describe('detailsFromSchemaErrors on the modify body (a union discriminated by scenario)', () => {
  const detailsFor = (body: unknown) => detailsFromSchemaErrors([...Value.Errors(ModifyBody, body)] as unknown as Parameters<typeof detailsFromSchemaErrors>[0])

  test('a missing or unknown scenario is reported on scenario, naming the four', () => {
    expect(detailsFor({ new_end_date: '2026-07-05' })).toEqual([{ field: 'scenario', issue: 'is required' }])
    expect(detailsFor({ scenario: 'cancel-secret' })).toEqual([
      { field: 'scenario', issue: 'must be one of: extend_end_date, shorten_end_date, correct_destination, correct_partner_reference' },
    ])
  })

  test("the scenario's own field missing, another scenario's field, an unknown field: each named for that scenario", () => {
    expect(detailsFor({ scenario: 'extend_end_date' })).toEqual([{ field: 'new_end_date', issue: 'is required for extend_end_date' }])
    expect(detailsFor({ scenario: 'correct_destination', new_end_date: '2026-07-05' })).toEqual([
      { field: 'destination_country', issue: 'is required for correct_destination' },
      { field: 'new_end_date', issue: 'is not used by correct_destination' },
    ])
    expect(detailsFor({ scenario: 'correct_partner_reference', partner_reference: 'X-1', note: 'x' })).toEqual([
      { field: 'note', issue: 'is not an accepted field' },
    ])
  })

  test('a malformed value of the right field has its own issue, and no value is echoed', () => {
    const details = detailsFor({ scenario: 'correct_destination', destination_country: 'de-secret' })
    expect(details).toEqual([{ field: 'destination_country', issue: expect.stringMatching(/ISO 3166-1 alpha-2/) }])
    expect(detailsFor([1])).toEqual([{ field: '$', issue: 'must be an object' }])
  })
})

describe("detailsFromSchemaErrors on the clock's advance (a union of objects told apart by their fields)", () => {
  const detailsFor = (body: unknown) =>
    detailsFromSchemaErrors([...Value.Errors(AdvanceBody, body)] as unknown as Parameters<typeof detailsFromSchemaErrors>[0])
  const either = { field: '$', issue: 'must be {"days": n} or {"to": date or instant}' }

  test("a body with one member's field has that member's problems, named", () => {
    expect(detailsFor({ days: 0 })).toEqual([{ field: 'days', issue: 'must be a whole number of days, at least 1' }])
    expect(detailsFor({ days: 1.5 })).toEqual([{ field: 'days', issue: 'must be a whole number of days, at least 1' }])
    expect(detailsFor({ to: 'next tuesday' })).toEqual([{ field: 'to', issue: 'must be a date (YYYY-MM-DD) or an ISO 8601 instant' }])
    expect(detailsFor({ days: 2, note: 'x' })).toEqual([{ field: 'note', issue: 'is not an accepted field' }])
  })

  test("neither member's field, or both: the union's own issue", () => {
    expect(detailsFor({})).toEqual([either])
    expect(detailsFor({ days: 2, to: '2027-01-15' })).toEqual([either])
    expect(detailsFor([1])).toEqual([either])
  })
})
