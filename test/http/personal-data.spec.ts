import type { APIResponse } from '@playwright/test'
import { addDays, ages, API, expect, expectError, fieldsOf, issuePolicy, searchBody, test, tripFrom } from './support/client'

/** A pii_not_allowed answer that names these paths and repeats none of the rejected values. */
async function rejected(response: APIResponse, paths: string[], values: string[]) {
  const error = await expectError(response, 422, 'pii_not_allowed')
  expect(fieldsOf(error).sort()).toEqual([...paths].sort())
  const raw = (await response.text()) + JSON.stringify(response.headersArray())
  for (const value of values) expect(raw, `the answer repeats ${value}`).not.toContain(value)
  return error
}

test.describe('pii_not_allowed (422)', () => {
  test('a name on a traveller at issue', async ({ request }) => {
    const trip = tripFrom(5, 5)
    await rejected(
      await request.post(API.issue, { data: { plan_id: 'plan_any', trip, travellers: [{ age: 30, name: 'Asha Zq Rao' }] } }),
      ['travellers[0].name'],
      ['Asha Zq Rao'],
    )
  })

  test('folded field names: firstName, FIRST-NAME, e_mail, homeAddress and friends', async ({ request }) => {
    const fields: Record<string, string> = {
      firstName: 'Val-firstName-91',
      'FIRST-NAME': 'Val-FIRST-NAME-92',
      e_mail: 'Val-e_mail-93',
      homeAddress: 'Val-homeAddress-94',
      'Date Of Birth': 'Val-dob-95',
      passport_no: 'Val-passport-96',
      MobileNumber: 'Val-mobile-97',
      nominee_name: 'Val-nominee-98',
      PAN: 'Val-pan-99',
      Gender: 'Val-gender-100',
      aadhaarNumber: 'Val-aadhaar-101',
      surName: 'Val-surname-102',
    }
    const response = await request.post(API.issue, { data: { plan_id: 'plan_any', trip: tripFrom(5, 5), travellers: ages(30), ...fields } })
    const paths = Object.keys(fields).map((key) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key)))
    await rejected(response, paths, Object.values(fields))
  })

  test('nested at any depth, inside objects and arrays', async ({ request }) => {
    const data = {
      ...searchBody(tripFrom(5, 5)),
      booking: { contacts: [{ kind: 'primary' }, { kind: 'backup', details: { telephone: '+91 98xx 000-555' } }] },
    }
    await rejected(await request.post(API.search, { data }), ['booking.contacts[1].details.telephone'], ['+91 98xx 000-555'])
  })

  test('nested deeper than any real request still answers pii_not_allowed', async ({ request }) => {
    let deep: Record<string, unknown> = { email: 'deep-secret-value' }
    for (let level = 0; level < 20; level++) deep = { wrap: deep }
    const response = await request.post(API.search, { data: { ...searchBody(tripFrom(5, 5)), extra: deep } })
    const error = await expectError(response, 422, 'pii_not_allowed')
    expect(fieldsOf(error)[0]).toMatch(/^extra(\.wrap){20}\.email$/)
    expect(await response.text()).not.toContain('deep-secret-value')
  })

  test('personal data next to an over-long list still answers pii_not_allowed', async ({ request }) => {
    const data = { passport: 'P-LONG-LIST-77', trip: tripFrom(5, 5), travellers: Array.from({ length: 70 }, () => ({ age: 30 })) }
    await rejected(await request.post(API.search, { data }), ['passport'], ['P-LONG-LIST-77'])
  })

  test('an e-mail-shaped partner_reference, at issue and in a correction', async ({ request }) => {
    const trip = tripFrom(5, 5)
    await rejected(
      await request.post(API.issue, { data: { plan_id: 'plan_any', trip, travellers: ages(30), partner_reference: 'asha.rao@example.com' } }),
      ['partner_reference'],
      ['asha.rao@example.com', 'asha.rao', 'example.com'],
    )
    const { policy } = await issuePolicy(request, { trip })
    await rejected(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_partner_reference', partner_reference: 'ops+team@corp.example.in' } }),
      ['partner_reference'],
      ['ops+team@corp.example.in'],
    )
  })

  test('is checked on every endpoint: session, search, issue and modify', async ({ request }) => {
    const { policy, trip } = await issuePolicy(request)
    await rejected(await request.post(API.session, { data: { lastName: 'Zqx-1' } }), ['lastName'], ['Zqx-1'])
    await rejected(
      await request.post(API.search, { data: { ...searchBody(trip), travellers: [{ age: 30, dob: '1990-01-01' }] } }),
      ['travellers[0].dob'],
      ['1990-01-01'],
    )
    await rejected(await request.post(API.issue, { data: { plan_id: policy.plan_id, trip, travellers: ages(30), zip: '560001' } }), ['zip'], ['560001'])
    await rejected(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 1), phone: '5550100' } }),
      ['phone'],
      ['5550100'],
    )
  })

  test('personal data wins over validation errors in the same body', async ({ request }) => {
    // Missing travellers, lowercase country, unknown field AND a personal-data field.
    const data = { trip: tripFrom(5, 5, 'in', 'fr'), coupon: 1, email: 'who@example.org' }
    await rejected(await request.post(API.search, { data }), ['email'], ['who@example.org'])
  })
})
