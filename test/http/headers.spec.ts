import type { APIResponse } from '@playwright/test'
import { addDays, API, expect, issuePolicy, raw, searchBody, test, tripFrom } from './support/client'

/** The three security headers, on a response of any status. */
async function expectSecurityHeaders(response: APIResponse) {
  const body = await response.json()
  const headers = response.headers()
  expect(body.request_id).toMatch(/^req_\w+$/)
  expect(headers['x-request-id']).toBe(body.request_id)
  expect(headers['cache-control']).toBe('no-store')
  expect(headers['x-content-type-options']).toBe('nosniff')
  return body.request_id as string
}

// Every other spec checks the same headers through `expectOk()` and `expectError()` (support/client.ts), so 401 and
// 429 answers are covered where those statuses are produced (session-expiry, rate-limit).
test.describe('security headers on every sandbox response', () => {
  test('successes and every error status the shared server can produce', async ({ request }) => {
    const json = { 'content-type': 'application/json' }
    const { policy, trip, body: issued } = await issuePolicy(request)
    const responses: [number, APIResponse][] = [
      [200, await request.post(API.search, { data: searchBody(trip) })],
      [200, await request.post(API.issue, { data: issued })],
      [200, await request.post(API.modify(policy.policy_ref), { data: { scenario: 'extend_end_date', new_end_date: addDays(trip.end_date, 1) } })],
      [400, await request.post(API.search, { headers: json, data: raw('{') })],
      [404, await request.post('/api/sandbox/unknown')],
      [404, await request.post(API.modify('pol_sbx_nope'), { data: { scenario: 'correct_destination', destination_country: 'DE' } })],
      [405, await request.get(API.search)],
      [409, await request.post(API.issue, { data: { ...issued, travellers: [{ age: 31 }] } })],
      [413, await request.post(API.search, { headers: json, data: raw('"' + 'x'.repeat(17_000) + '"') })],
      [415, await request.post(API.search, { headers: { 'content-type': 'text/plain' }, data: raw('hi') })],
      [422, await request.post(API.search, { data: searchBody(tripFrom(-5, 2)) })],
      [200, await request.post(API.session)],
    ]
    const ids = new Set<string>()
    for (const [status, response] of responses) {
      expect(response.status()).toBe(status)
      ids.add(await expectSecurityHeaders(response))
    }
    expect(ids.size).toBe(responses.length)
  })
})
