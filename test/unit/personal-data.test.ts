import { describe, expect, test } from 'bun:test'
import { refusal, thrown } from './support/errors'
import type { ErrorCode } from '../../src/errors'
import { MAX_DEPTH, findPersonalData, isPersonalDataName, looksLikeEmail, rejectPersonalData } from '../../src/domain/personal-data'

const PERSONAL_NAMES = [
  'firstName',
  'first_name',
  'FIRST-NAME',
  'first name',
  'First Name',
  'name',
  'Name',
  'lastName',
  'last_name',
  'fullName',
  'givenName',
  'middle_name',
  'familyName',
  'surname',
  'SURNAME',
  'dob',
  'DOB',
  'street',
  'postcode',
  'post_code',
  'zip',
  'ZIP',
  'national_id',
  'nationalId',
  'pan',
  'PAN',
  'ssn',
  'SSN',
  'gender',
  'Gender',
  'email',
  'Email',
  'e-mail',
  'E_Mail',
  'emailAddress',
  'contact_email',
  'contactPhone',
  'phone',
  'phoneNumber',
  'mobile',
  'mobile_no',
  'telephone',
  'homeAddress',
  'address',
  'address_line_1',
  'passportNo',
  'passport_number',
  'dateOfBirth',
  'date_of_birth',
  'birthDate',
  'placeOfBirth',
  'nominee_details',
  'nomineeName',
  'aadhaarNumber',
  'AADHAAR',
]

const INNOCENT_NAMES = [
  'age',
  'trip',
  'travellers',
  'destination_country',
  'origin_country',
  'currency',
  'plan_id',
  'partner_reference',
  'scenario',
  'start_date',
  'end_date',
  'new_end_date',
  'companion',
  'panorama',
  'zipper',
  'company',
  'names',
  'nameless',
  'pancake',
  'genders',
  'dobby',
  'streetwise',
]

describe('personal-data field names', () => {
  test.each(PERSONAL_NAMES)('%p is personal data', (name) => {
    expect(isPersonalDataName(name)).toBe(true)
  })

  test.each(INNOCENT_NAMES)('%p is not personal data', (name) => {
    expect(isPersonalDataName(name)).toBe(false)
  })

  test('exact names match only exactly; contained names match anywhere', () => {
    expect(isPersonalDataName('zip')).toBe(true)
    expect(isPersonalDataName('zipper')).toBe(false)
    expect(isPersonalDataName('pan')).toBe(true)
    expect(isPersonalDataName('panorama')).toBe(false)
    expect(isPersonalDataName('travellerEmailPrimary')).toBe(true)
    expect(isPersonalDataName('x_passport_y')).toBe(true)
  })
})

describe('findPersonalData', () => {
  test('finds names at any depth, including inside arrays, by JSON path', () => {
    const body = {
      trip: { origin_country: 'IN', destination_country: 'FR', start_date: '2026-06-01', end_date: '2026-06-08' },
      travellers: [{ age: 30 }, { age: 31, first_name: 'Asha' }, { age: 5, meta: { Contact: { homeAddress: 'x' } } }],
      nominee_details: { relation: 'spouse' },
      extra: [[{ SSN: '1' }]],
    }
    expect(findPersonalData(body).sort()).toEqual(
      ['extra[0][0].SSN', 'nominee_details', 'travellers[1].first_name', 'travellers[2].meta.Contact.homeAddress'].sort(),
    )
  })

  test('a clean sandbox body has no findings', () => {
    const body = {
      plan_id: 'plan_intl_standard_abc',
      trip: { origin_country: 'IN', destination_country: 'FR', start_date: '2026-06-01', end_date: '2026-06-08' },
      travellers: [{ age: 30 }, { age: 4 }],
      currency: 'EUR',
      partner_reference: 'BOOKING-1234',
      scenario: 'correct_partner_reference',
      companion: 'none',
      panorama: true,
      zipper: 1,
    }
    expect(findPersonalData(body)).toEqual([])
  })

  test('e-mail-shaped string values are reported by path wherever they are', () => {
    const body = {
      partner_reference: 'asha@example.com',
      travellers: [{ age: 30, note: 'write to x.y+z@mail.example.org please' }],
      deep: [{ list: ['ok', 'a@b.io'] }],
    }
    expect(findPersonalData(body).sort()).toEqual(['deep[0].list[1]', 'partner_reference', 'travellers[0].note'].sort())
    expect(findPersonalData('root@example.com')).toEqual(['$'])
  })

  test('strings that merely contain @ are not e-mail addresses', () => {
    expect(looksLikeEmail('BOOKING@2026')).toBe(false)
    expect(looksLikeEmail('@handle')).toBe(false)
    expect(looksLikeEmail('a@b')).toBe(false)
    expect(looksLikeEmail('a@b.com')).toBe(true)
  })

  test('an e-mail-shaped key is reported by its parent path, never by itself', () => {
    expect(findPersonalData({ travellers: [{ age: 3, 'asha@example.com': true }] })).toEqual(['travellers[0]'])
    expect(findPersonalData({ 'asha@example.com': 1 })).toEqual(['$'])
    const paths = findPersonalData({ a: { b: { 'someone@corp.example': { nested: 1 } } } })
    expect(paths).toEqual(['a.b'])
    expect(paths.join()).not.toContain('@')
  })
})

describe('rejectPersonalData', () => {
  test('passes a clean body', () => {
    expect(() => rejectPersonalData({ travellers: [{ age: 1 }] })).not.toThrow()
    expect(() => rejectPersonalData({})).not.toThrow()
  })

  test('is pii_not_allowed (422) naming every path and no value', () => {
    const values = ['Asha Rao', '+91 98765 43210', 'P1234567', '1990-01-01', 'asha.rao@example.com', 'ABCDE1234F', 'hidden@secret.example']
    const body = {
      travellers: [
        { age: 30, fullName: values[0], contactPhone: values[1] },
        { age: 3, passportNo: values[2], dateOfBirth: values[3] },
      ],
      contact: { Email: values[4], PAN: values[5] },
      note: values[6],
      [values[6]!]: 'key',
    }
    const error = thrown(() => rejectPersonalData(body))
    expect(error.code).toBe('pii_not_allowed')
    expect(error.status).toBe(422)
    expect(error.details!.map((d) => d.field).sort()).toEqual(
      [
        '$',
        'contact.Email',
        'contact.PAN',
        'note',
        'travellers[0].contactPhone',
        'travellers[0].fullName',
        'travellers[1].dateOfBirth',
        'travellers[1].passportNo',
      ].sort(),
    )
    const text = JSON.stringify({ message: error.message, details: error.details })
    for (const value of values) expect(text).not.toContain(value)
  })

  test('lists a path once even when found twice', () => {
    const error = thrown(() => rejectPersonalData({ 'a@b.com': 1, 'c@d.org': 2 }))
    expect(error.details).toEqual([{ field: '$', issue: expect.any(String) }])
  })

  test('the same person under every spelling is caught', () => {
    for (const key of ['firstName', 'first_name', 'FIRST-NAME', 'first name', 'First_Name']) {
      expect(thrown(() => rejectPersonalData({ travellers: [{ age: 1, [key]: 'x' }] })).code).toBe('pii_not_allowed')
    }
  })
})

describe('depth limit', () => {
  const nested = (levels: number): unknown => {
    let value: unknown = 1
    for (let i = 0; i < levels; i++) value = { a: value }
    return value
  }

  test(`nesting to ${MAX_DEPTH} levels is walked`, () => {
    expect(findPersonalData(nested(MAX_DEPTH))).toEqual([])
    expect(findPersonalData({ x: nested(MAX_DEPTH - 2), email: 1 })).toEqual(['email'])
  })

  test(`nesting deeper than ${MAX_DEPTH} is validation_failed, not pii and not a crash`, () => {
    expect(refusal(() => rejectPersonalData(nested(MAX_DEPTH + 1)))).toMatchObject({ status: 422, code: 'validation_failed' })
    let arrays: unknown = []
    for (let i = 0; i < 1000; i++) arrays = [arrays]
    expect(thrown(() => rejectPersonalData(arrays)).code).toBe('validation_failed')
  })
})

describe('personal data beats the body limits', () => {
  test('personal data deeper than the depth limit is still pii_not_allowed, naming its path', () => {
    let body: Record<string, unknown> = { email: 'x' }
    for (let i = 0; i < 40; i++) body = { wrap: body }
    const error = thrown(() => rejectPersonalData(body))
    expect(error.code).toBe('pii_not_allowed')
    expect(error.details![0]!.field).toBe(`${'wrap.'.repeat(40)}email`)
  })

  test('personal data beside an over-long list is pii_not_allowed; the list alone is validation_failed', () => {
    const travellers = Array.from({ length: 70 }, () => ({ age: 30 }))
    expect(thrown(() => rejectPersonalData({ travellers, passport: 'X' })).code).toBe('pii_not_allowed')
    expect(thrown(() => rejectPersonalData({ extra: travellers })).details).toEqual([{ field: 'extra', issue: 'at most 64 items' }])
  })

  test('a body nested thousands deep is walked without overflowing the stack', () => {
    const deep = JSON.parse(`${'['.repeat(5000)}"a@b.example"${']'.repeat(5000)}`)
    expect(thrown(() => rejectPersonalData(deep)).code).toBe('pii_not_allowed')
  })
})

describe('a personal-data key that carries a value', () => {
  test('is reported by its parent path, so the value is never repeated', () => {
    const error = thrown(() => rejectPersonalData({ contact: { 'phone +919876543210': 1 } }))
    expect(error.code).toBe('pii_not_allowed')
    expect(error.details).toEqual([{ field: 'contact', issue: 'personal data is not accepted' }])
    expect(JSON.stringify(error)).not.toContain('9876543210')
  })

  test('a key that is no plain identifier is never repeated: what lies under it is reported on its object', () => {
    const data = 'Ravi Kumar +91 98765 43210'
    const long = 'k'.repeat(5_000)
    const cases: [unknown, ErrorCode, string][] = [
      [{ [data]: Array.from({ length: 65 }, () => 1) }, 'validation_failed', '$'],
      [{ trip: { [data]: { phone: 1 } } }, 'pii_not_allowed', 'trip'],
      [{ trip: { [data]: [[{ email: 1 }]] } }, 'pii_not_allowed', 'trip'],
      [{ travellers: [{ [long]: Array.from({ length: 65 }, () => 1) }] }, 'validation_failed', 'travellers[0]'],
      [{ a: { [data]: JSON.parse('['.repeat(20) + ']'.repeat(20)) } }, 'validation_failed', 'a'],
    ]
    for (const [body, code, field] of cases) {
      const error = thrown(() => rejectPersonalData(body))
      expect({ code: error.code, fields: error.details!.map((detail) => detail.field) }).toEqual({ code, fields: [field] })
      expect(JSON.stringify(error)).not.toContain('Ravi')
      expect(JSON.stringify(error)).not.toContain('kkkk')
    }
  })

  test('the traveller list is left to its own limit (too_many_travellers), not the list cap', () => {
    expect(() => rejectPersonalData({ travellers: Array.from({ length: 100 }, () => ({ age: 3 })) })).not.toThrow()
    expect(thrown(() => rejectPersonalData({ trip: { travellers: Array.from({ length: 100 }, () => 1) } })).code).toBe('validation_failed')
  })
})

describe('cost of the check', () => {
  const OLD_EMAIL_SHAPE = /[^\s@]+@[^\s@]+\.[^\s@]{2,}/

  test('the one-pass e-mail check answers exactly as the e-mail pattern did', () => {
    const alphabet = ['a', 'b', '.', '@', ' ', '\t', '\u00a0', '\u2028', '-']
    let seed = 7
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
    for (let index = 0; index < 20_000; index++) {
      const value = Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
      expect([value, looksLikeEmail(value)]).toEqual([value, OLD_EMAIL_SHAPE.test(value)])
    }
  })

  /** Least time of several runs (the least is the one least disturbed by anything else on the machine). */
  function leastMs(work: () => void): number {
    let least = Infinity
    for (let run = 0; run < 7; run++) {
      const started = performance.now()
      for (let repeat = 0; repeat < 10; repeat++) work()
      least = Math.min(least, performance.now() - started)
    }
    return least
  }

  // Values and keys without spaces, the shapes that made the old pattern rescan from every start.
  const hostile: [string, (size: number) => string][] = [
    ['no @', (size) => 'a'.repeat(size)],
    ['one @, no dot after it', (size) => `${'a'.repeat(size / 2)}@${'b'.repeat(size / 2 - 1)}`],
    ['@ and dots everywhere', (size) => 'a@b.'.repeat(size / 4).replace(/\./g, '@')],
    ['many @', (size) => '@'.repeat(size)],
  ]
  for (const [name, make] of hostile) {
    test(`linear in the size of a value and of a key: ${name}`, () => {
      const cost = (size: number) =>
        leastMs(() => {
          findPersonalData({ pad: make(size) })
          findPersonalData({ [make(size)]: 1 })
        })
      // Sixteen times the input: about sixteen times the work when linear, 256 when quadratic; the
      // margin between them leaves room for a busy machine's noise (CI may share its cores).
      const ratio = cost(65_536) / Math.max(cost(4_096), 0.05)
      expect(ratio).toBeLessThan(64)
    })
  }
})
