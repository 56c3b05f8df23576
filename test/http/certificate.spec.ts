/**
 * `POST /api/sandbox/policy/{policy_ref}/documents/policy_certificate`: the specimen PDF, read back
 * as text (unpdf) the way a partner's own test would check it.
 */
import type { APIResponse } from '@playwright/test'
import { extractText, getDocumentProxy } from 'unpdf'
import { addDays, ages, API, expect, expectError, expectOk, issuePolicy, rateLimitHeader, test, tripFrom } from './support/client'

const MARK = 'SPECIMEN — SANDBOX — NOT INSURANCE'

/** The text of each page; pdf.js joins a line's pieces with spaces and lines with newlines. */
async function pagesOf(bytes: Buffer): Promise<string[]> {
  const { text } = await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: false })
  return text.map((page) => page.replace(/\s+/g, ' '))
}

async function pdfOf(response: APIResponse): Promise<Buffer> {
  expect(response.status(), response.status() === 200 ? '' : await response.text()).toBe(200)
  const headers = response.headers()
  expect(headers['content-type']).toBe('application/pdf')
  expect(headers['x-request-id']).toMatch(/^req_[0-9a-f]+$/)
  expect(headers['cache-control']).toBe('no-store')
  expect(headers['x-content-type-options']).toBe('nosniff')
  rateLimitHeader(response)
  const bytes = await response.body()
  expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-')
  return bytes
}

test.describe('POST /api/sandbox/policy/{policy_ref}/documents/policy_certificate', () => {
  test('answers the specimen PDF: the mark, refs, plan, trip, ages, synthetic identity, indicative premium and the history', async ({ request }) => {
    const trip = tripFrom(20, 9, 'IN', 'FR')
    const { policy, plan } = await issuePolicy(request, { trip, travellers: ages(34, 8), partner_reference: 'BK-CERT-7' })
    const endorsed = (
      await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 3) } }))
    ).data
    const response = await request.post(API.certificate(policy.policy_ref))
    const pages = await pagesOf(await pdfOf(response))
    expect(response.headers()['content-disposition']).toBe(`attachment; filename="policy_certificate_${policy.policy_ref}.pdf"`)

    expect(pages.length).toBe(1)
    const text = pages[0]!
    expect(text).toContain(MARK)
    for (const value of [policy.policy_ref, policy.svc_insurance_id, 'BK-CERT-7', 'endorsed', plan.name, plan.plan_id, 'IN', 'FR', trip.start_date]) {
      expect(text).toContain(value)
    }
    expect(text).toContain(`${trip.start_date} to ${addDays(trip.end_date, 3)}`) // the trip as it stands
    expect(text).toContain('Traveller ages 34, 8')
    for (const traveller of policy.travellers) expect(text).toContain(traveller.traveller_ref)
    expect(text).toContain(policy.traveller_identity)
    const premium = `${policy.currency} ${endorsed.premium.toFixed(2)}`
    expect(text).toMatch(new RegExp(`${premium} \\(indicative`))
    expect(text).toContain(`#1 ${endorsed.endorsement.created_at.slice(0, 10)} ${endorsed.endorsement.created_at.slice(11, 19)} UTC extend_end_date`)
    expect(text).toContain(
      `trip.end_date: ${trip.end_date} to ${addDays(trip.end_date, 3)}; premium change ${policy.currency} +${endorsed.premium_change.toFixed(2)}`,
    )
  })

  test('the same policy state gives the same bytes; a correction gives a new certificate that shows it', async ({ request }) => {
    const { policy } = await issuePolicy(request)
    const first = await pdfOf(await request.post(API.certificate(policy.policy_ref)))
    const again = await pdfOf(await request.post(API.certificate(policy.policy_ref), { data: {} }))
    expect(again.equals(first)).toBe(true)
    expect((await pagesOf(first))[0]).toContain('No endorsements.')

    await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_partner_reference', partner_reference: 'BK-NEW' } }))
    const corrected = await pdfOf(await request.post(API.certificate(policy.policy_ref)))
    expect(corrected.equals(first)).toBe(false)
    expect((await pagesOf(corrected))[0]).toContain('partner_reference: none to BK-NEW')
    expect((await pdfOf(await request.post(API.certificate(policy.policy_ref)))).equals(corrected)).toBe(true)
  })

  test('errors are the JSON envelope: policy_not_found for another session or an unknown ref, validation_failed for a field', async ({
    request,
    newClient,
  }) => {
    const { policy } = await issuePolicy(request)
    // The stranger opens a session first: a call with no cookie would say so in its "not found".
    const stranger = await newClient()
    await expectOk(await stranger.post(API.session))
    const foreign = await expectError(await stranger.post(API.certificate(policy.policy_ref)), 404, 'policy_not_found')
    const unknown = await expectError(await request.post(API.certificate('pol_sbx_00000000000000000000')), 404, 'policy_not_found')
    expect(foreign).toEqual(unknown)
    await expectError(await request.post(API.certificate(policy.policy_ref), { data: { format: 'pdf' } }), 422, 'validation_failed')
    // Only the policy_certificate document exists.
    await expectError(await request.post(`/api/sandbox/policy/${policy.policy_ref}/documents/invoice`), 404, 'not_found')
  })

  test('a cancelled policy: every page stamped CANCELLED, with the cancellation and its refund; the history stays', async ({ request }) => {
    const trip = tripFrom(15, 6, 'IN', 'AE')
    const { policy } = await issuePolicy(request, { trip, travellers: ages(44) })
    await expectOk(await request.post(API.modify(policy.policy_ref), { data: { scenario: 'correct_partner_reference', partner_reference: 'BK-CXL' } }))
    const before = (await pagesOf(await pdfOf(await request.post(API.certificate(policy.policy_ref))))).join(' ')
    expect(before).not.toContain('CANCELLED')
    const cancelled = (await expectOk(await request.post(API.cancel(policy.policy_ref)))).data
    const pages = await pagesOf(await pdfOf(await request.post(API.certificate(policy.policy_ref))))
    for (const page of pages) expect(page).toContain('CANCELLED')
    const text = pages.join(' ')
    expect(text).toContain('Status cancelled')
    expect(text).toContain(`Cancelled ${cancelled.cancelled_at.slice(0, 10)} ${cancelled.cancelled_at.slice(11, 19)} UTC`)
    expect(text).toContain(
      `Refund ${policy.currency} ${cancelled.refund.amount.toFixed(2)} (whole premium, cancelled before the start date: 7 unused of 7 days)`,
    )
    expect(text).toContain('correct_partner_reference')
  })
})
