/**
 * What a newcomer meets first: `GET /` and `GET /api/sandbox` point to the docs page and the
 * OpenAPI document, and the start-up line names a URL a person can open.
 */
import { API, expect, expectError, expectOk, test } from './support/client'
import { portOf, rawExchange } from './support/raw'

const DOCS = '/api/sandbox/docs'
const SPEC = '/api/sandbox/openapi.json'

for (const path of ['/', '/api/sandbox']) {
  test(`GET ${path} points to the docs page and the OpenAPI document, and counts against nothing`, async ({ request }) => {
    const first = await expectOk(await request.post(API.session))

    const answer = await request.get(path)
    expect(answer.status()).toBe(200)
    expect(await answer.json()).toMatchObject({ docs: DOCS, openapi: SPEC })
    expect(answer.headers()['link']).toBe(`<${DOCS}>; rel="service-doc", <${SPEC}>; rel="service-desc"`)
    // A browser goes straight to the docs page.
    const browser = await request.get(path, { headers: { accept: 'text/html,application/xhtml+xml' }, maxRedirects: 0 })
    expect(browser.status()).toBe(302)
    expect(browser.headers()['location']).toBe(DOCS)
    // The links lead somewhere.
    expect((await request.get(DOCS)).status()).toBe(200)
    expect((await request.get(SPEC)).status()).toBe(200)

    const refused = await request.post(path)
    await expectError(refused, 405, 'method_not_allowed')
    expect(refused.headers()['allow']).toBe('GET')
    // Only the two sessions count against this network: the front door, the documents and the 405 do not.
    const next = await expectOk(await request.post(API.session))
    expect(next.meta.rate_limit.remaining).toBe(first.meta.rate_limit.remaining - 1)
  })
}

test('the start-up line names the docs page at localhost when the server listens on every interface', async ({ privateServer }) => {
  const server = await privateServer('startup-line', { HOST: '0.0.0.0' })
  const port = new URL(server.url).port
  const line = server
    .stdout()
    .split('\n')
    .find((text) => text.includes('"msg":"listening"'))
  expect(line, server.stdout()).toBeDefined()
  const listening = JSON.parse(line!)
  expect(listening.docs).toBe(`http://localhost:${port}${DOCS}`)
  expect(listening.url).toBe(`http://localhost:${port}/`)
  expect((await fetch(listening.docs)).status).toBe(200)
})

test('the OpenAPI document with no usable Host: 200, its servers the origin the runtime saw, else relative', async ({ baseURL }) => {
  // HTTP/1.0 needs no Host: Bun then hands over a bare path (servers `/`), Node and Deno an origin
  // of their own making (the socket's address, localhost).
  const {
    responses: [old],
  } = await rawExchange(portOf(baseURL!), [`GET ${SPEC} HTTP/1.0\r\n\r\n`], { deadlineMs: 10_000 })
  expect(old?.status).toBe(200)
  expect(old?.headers['content-type']).toBe('application/json')
  // A Host no URL parser takes (a port out of range): relative on every runtime.
  const malformed = `GET ${SPEC} HTTP/1.1\r\nHost: x:99999\r\nConnection: close\r\n\r\n`
  const {
    responses: [answer],
  } = await rawExchange(portOf(baseURL!), [malformed], { deadlineMs: 10_000, responses: 1 })
  expect(answer?.status).toBe(200)
  expect(JSON.parse(answer!.text).servers).toEqual([{ url: '/', description: 'The sandbox serving this document' }])
})
