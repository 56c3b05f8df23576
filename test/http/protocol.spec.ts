import { addDays, ages, API, expect, expectError, expectOk, fieldsOf, issuePolicy, raw, searchBody, sessionCookie, test, tripFrom } from './support/client'

const json = { 'content-type': 'application/json' }

/** A valid-JSON body of exactly `bytes` bytes (a padded search). */
function bodyOfSize(bytes: number): string {
  const base = JSON.stringify({ ...searchBody(), pad: '' })
  return base.replace('"pad":""', `"pad":"${'p'.repeat(bytes - base.length)}"`)
}

test.describe('request framing errors', () => {
  test('invalid_json (400) for a body that does not parse', async ({ request }) => {
    for (const data of ['{', '{"trip": }', "{'trip': 1}", 'undefined', '{"a":1}}']) {
      await expectError(await request.post(API.search, { headers: json, data: raw(data) }), 400, 'invalid_json')
    }
    await expectError(await request.post(API.issue, { headers: json, data: raw('{"plan_id":') }), 400, 'invalid_json')
    await expectError(await request.post(API.session, { headers: json, data: raw('[') }), 400, 'invalid_json')
    await expectError(await request.post(API.modify('pol_sbx_0123456789abcdef0123'), { headers: json, data: raw('nope') }), 400, 'invalid_json')
  })

  test('unsupported_media_type (415) for a non-empty body that is not application/json', async ({ request }) => {
    const data = JSON.stringify(searchBody())
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      await expectError(await request.post(API.search, { headers: { 'content-type': type }, data }), 415, 'unsupported_media_type')
    }
    // application/json with parameters is still JSON.
    await expectOk(await request.post(API.search, { headers: { 'content-type': 'application/json; charset=utf-8' }, data }))
    // An empty body needs no media type (explicit session creation).
    await expectOk(await request.post(API.session, { headers: { 'content-type': 'text/plain' }, data: raw('') }))
  })

  test('payload_too_large (413) for a body over 16 KiB; exactly 16 KiB is read', async ({ request }) => {
    const over = bodyOfSize(16 * 1024 + 1)
    expect(Buffer.byteLength(over)).toBe(16 * 1024 + 1)
    await expectError(await request.post(API.search, { headers: json, data: raw(over) }), 413, 'payload_too_large')
    await expectError(await request.post(API.issue, { headers: json, data: raw(bodyOfSize(64 * 1024)) }), 413, 'payload_too_large')
    const exact = bodyOfSize(16 * 1024)
    expect(Buffer.byteLength(exact)).toBe(16 * 1024)
    // Read and parsed: the padding is an unknown field.
    const error = await expectError(await request.post(API.search, { headers: json, data: raw(exact) }), 422, 'validation_failed')
    expect(fieldsOf(error)).toEqual(['pad'])
  })

  test('not_found (404) for an unknown sandbox path, in the envelope', async ({ request }) => {
    for (const path of [
      '/api/sandbox/plans',
      '/api/sandbox/policy/pol_sbx_0123456789abcdef0123/refund',
      '/api/sandbox/nope',
      '/api/sandbox/policy/a/b/modify',
    ]) {
      const response = await request.post(path, { data: searchBody() })
      await expectError(response, 404, 'not_found')
      expect(sessionCookie(response)).toBeUndefined()
    }
  })

  test('method_not_allowed (405) with Allow: POST for another method on a sandbox route', async ({ request }) => {
    const routes = [API.session, API.search, API.issue, API.modify('pol_sbx_0123456789abcdef0123')]
    for (const path of routes) {
      const response = await request.get(path)
      await expectError(response, 405, 'method_not_allowed')
      expect(response.headers()['allow']).toBe('POST')
      expect(sessionCookie(response)).toBeUndefined()
    }
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const response = await request.fetch(API.search, { method, data: searchBody() })
      await expectError(response, 405, 'method_not_allowed')
      expect(response.headers()['allow']).toBe('POST')
    }
  })

  test('method_not_allowed (405) with Allow: GET for another method on the documentation, counting nothing', async ({ request }) => {
    const first = await expectOk(await request.post(API.session))
    for (const path of ['/api/sandbox/openapi.json', '/api/sandbox/docs', '/api/sandbox/docs/swagger-ui.css', '/api/sandbox/docs/swagger-ui-bundle.js']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const response = await request.fetch(path, { method })
        await expectError(response, 405, 'method_not_allowed')
        expect(response.headers()['allow'], `${method} ${path}`).toBe('GET')
        expect(sessionCookie(response)).toBeUndefined()
      }
    }
    const next = await expectOk(await request.post(API.search, { data: searchBody() }))
    expect(next.meta.rate_limit.remaining).toBe(first.meta.rate_limit.remaining - 1)
  })

  test('route errors are not counted against the allowance', async ({ request }) => {
    const first = await expectOk(await request.post(API.session))
    await expectError(await request.get(API.search), 405, 'method_not_allowed')
    await expectError(await request.post('/api/sandbox/unknown'), 404, 'not_found')
    const next = await expectOk(await request.post(API.search, { data: searchBody() }))
    expect(next.meta.rate_limit.remaining).toBe(first.meta.rate_limit.remaining - 1)
  })
})

test.describe("the contract's check order", () => {
  test('route before body: a bad body to an unknown route is 404, to a wrong method 405', async ({ request }) => {
    await expectError(await request.post('/api/sandbox/quotes', { headers: json, data: raw('{"email": "a@b.co", ') }), 404, 'not_found')
    await expectError(await request.post('/api/sandbox/quotes', { headers: json, data: raw('x'.repeat(20_000)) }), 404, 'not_found')
    const response = await request.fetch(API.issue, { method: 'PUT', headers: json, data: raw('{oops') })
    await expectError(response, 405, 'method_not_allowed')
  })

  test('size before media type and parse; media type before parse', async ({ request }) => {
    await expectError(await request.post(API.search, { headers: { 'content-type': 'text/plain' }, data: raw('{'.repeat(17_000)) }), 413, 'payload_too_large')
    await expectError(await request.post(API.search, { headers: json, data: raw('{'.repeat(17_000)) }), 413, 'payload_too_large')
    await expectError(await request.post(API.search, { headers: { 'content-type': 'text/plain' }, data: raw('{not json') }), 415, 'unsupported_media_type')
  })

  test('parse before personal data; personal data before validation', async ({ request }) => {
    await expectError(await request.post(API.search, { headers: json, data: raw('{"email": "who@example.org", ') }), 400, 'invalid_json')
    const error = await expectError(await request.post(API.issue, { data: { trip: 'bad', passport: 'K1234567' } }), 422, 'pii_not_allowed')
    expect(fieldsOf(error)).toEqual(['passport'])
  })

  test('validation (limits included) before references; references before state', async ({ request }) => {
    const trip = tripFrom(4, 6)
    // Unknown plan AND an invalid trip: validation answers.
    await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_nope', trip: { ...trip, start_date: '2001-01-01' }, travellers: ages(30) } }),
      422,
      'validation_failed',
    )
    // Unknown plan AND 7 travellers: the limit answers.
    await expectError(
      await request.post(API.issue, { data: { plan_id: 'plan_nope', trip, travellers: ages(1, 2, 3, 4, 5, 6, 7) } }),
      422,
      'too_many_travellers',
    )
    // Unknown policy AND a scenario missing its field: validation answers.
    await expectError(await request.post(API.modify('pol_sbx_0123456789abcdef0123'), { data: { scenario: 'extend_end_date' } }), 422, 'validation_failed')
    // Unknown policy AND a correction that could never apply: the reference answers.
    await expectError(
      await request.post(API.modify('pol_sbx_0123456789abcdef0123'), { data: { scenario: 'shorten_end_date', new_end_date: addDays(trip.start_date, -30) } }),
      404,
      'policy_not_found',
    )
    // An unknown plan with a trip no search returned: the reference answers, not plan_mismatch.
    await expectError(await request.post(API.issue, { data: { plan_id: 'plan_nope', trip: tripFrom(9, 2), travellers: ages(30) } }), 404, 'plan_not_found')
    const { policy } = await issuePolicy(request, { trip })
    // A known policy with a correction that does not apply: the state check answers.
    await expectError(
      await request.post(API.modify(policy.policy_ref), { data: { scenario: 'shorten_end_date', new_end_date: addDays(trip.end_date, 5) } }),
      422,
      'scenario_not_applicable',
    )
  })
})
