/**
 * Security headers and the session cookie (issue #4): what every response carries and never
 * carries, the cookie's attributes (Secure only for HTTPS from a trusted proxy), the token's
 * strength, and that the raw token is never written to the database (the SQLite file, or every row on PostgreSQL).
 */
import { API, call, expect, expectOk, type Reply, test, tripFrom, uniqueNetwork } from './support/client'
import { countRows, storeBytes } from './support/store'

/** The attributes of the `sbx_session` Set-Cookie line, names lower-cased. */
function cookieAttributes(reply: Reply): { value: string; attributes: Record<string, string | true> } {
  const line = reply.setCookies.find((candidate) => candidate.startsWith('sbx_session='))
  expect(line, `a sbx_session cookie in ${JSON.stringify(reply.setCookies)}`).toBeDefined()
  const [pair, ...rest] = line!.split(';').map((part) => part.trim())
  const attributes: Record<string, string | true> = {}
  for (const part of rest) {
    const [name, ...value] = part.split('=')
    attributes[name!.toLowerCase()] = value.length ? value.join('=') : true
  }
  return { value: pair!.slice('sbx_session='.length), attributes }
}

const BANNERS = ['server', 'x-powered-by', 'x-aspnet-version', 'via']

test.describe('security headers', () => {
  test('nosniff and no-store on every kind of answer; no Server or X-Powered-By banner anywhere', async ({ baseURL }) => {
    const base = baseURL!
    const network = uniqueNetwork()
    const answers: [string, Reply][] = [
      ['session 200', await call(base, API.session, { network })],
      ['search 422', await call(base, API.search, { body: { trip: 1 }, network })],
      ['search 400', await call(base, API.search, { body: '{', network })],
      ['sandbox 404', await call(base, '/api/sandbox/nope', { network })],
      ['sandbox 405', await call(base, API.search, { method: 'GET', network })],
      ['outside 404', await call(base, '/nope', { method: 'GET', network })],
      ['healthz', await call(base, '/healthz', { method: 'GET' })],
      ['readyz', await call(base, '/readyz', { method: 'GET' })],
      ['openapi', await call(base, '/api/sandbox/openapi.json', { method: 'GET' })],
      ['docs', await call(base, '/api/sandbox/docs', { method: 'GET' })],
    ]
    // The docs page is a static asset, the same for everyone, and may be cached (docs.ts); every
    // other answer may carry session data and is no-store.
    const isStatic = (what: string) => what === 'docs'
    const seen = answers.map(([what, reply]) => ({
      what,
      nosniff: reply.headers.get('x-content-type-options'),
      cacheControl: isStatic(what) ? 'static' : reply.headers.get('cache-control'),
      banners: BANNERS.filter((name) => reply.headers.has(name)).map((name) => `${name}: ${reply.headers.get(name)}`),
    }))
    expect(seen).toEqual(answers.map(([what]) => ({ what, nosniff: 'nosniff', cacheControl: isStatic(what) ? 'static' : 'no-store', banners: [] })))
    // The docs page is the one HTML answer: nosniff matters most there.
    const docs = answers.find(([what]) => what === 'docs')![1]
    expect(docs.status).toBe(200)
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/)
  })
})

test.describe('the session cookie', () => {
  test('HttpOnly, SameSite=Strict, Path=/, Max-Age = the remaining lifetime and the day an ended session is recognised; no Secure over plain HTTP', async ({
    baseURL,
  }) => {
    for (const reply of [
      await call(baseURL!, API.session, { network: uniqueNetwork() }),
      await call(baseURL!, API.search, { body: { trip: tripFrom(5, 5), travellers: [{ age: 30 }] }, network: uniqueNetwork() }),
    ]) {
      await expectOk(reply)
      const { attributes } = cookieAttributes(reply)
      expect(attributes.httponly).toBe(true)
      expect(attributes.samesite).toBe('Strict')
      expect(attributes.path).toBe('/')
      expect(attributes.secure).toBeUndefined()
      expect(attributes.domain, 'a host-only cookie').toBeUndefined()
      const remaining = (Date.parse(reply.json.meta.session_expires_at) - Date.now()) / 1000 + 86_400
      expect(Math.abs(Number(attributes['max-age']) - remaining)).toBeLessThanOrEqual(2)
    }
  })

  test('Secure when a trusted proxy says the request came over HTTPS, and only then', async ({ baseURL, privateServer }) => {
    // The shared server trusts one proxy hop.
    const trusted = await call(baseURL!, API.session, { network: uniqueNetwork(), headers: { 'x-forwarded-proto': 'https' } })
    expect(cookieAttributes(trusted).attributes.secure).toBe(true)
    const plain = await call(baseURL!, API.session, { network: uniqueNetwork(), headers: { 'x-forwarded-proto': 'http' } })
    expect(cookieAttributes(plain).attributes.secure).toBeUndefined()

    // A server that trusts no proxy ignores the header: anyone could send it.
    const server = await privateServer('security-untrusted', { SANDBOX_TRUST_PROXY: '0' })
    const untrusted = await call(server.url, API.session, { headers: { 'x-forwarded-proto': 'https' } })
    await expectOk(untrusted)
    expect(cookieAttributes(untrusted).attributes.secure).toBeUndefined()
  })

  test('the token carries at least 128 random bits, differs per session, and is not the session_ref', async ({ baseURL }) => {
    const tokens = new Set<string>()
    const refs = new Set<string>()
    for (let index = 0; index < 20; index++) {
      const reply = await call(baseURL!, API.session, { network: uniqueNetwork() })
      const { session_ref: ref } = (await expectOk(reply)).data
      const token = cookieAttributes(reply).value
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/) // base64url, no padding
      expect(Buffer.from(token, 'base64url').length * 8).toBeGreaterThanOrEqual(128)
      expect(token).not.toContain(ref.replace(/^sbx_/, ''))
      tokens.add(token)
      refs.add(ref)
    }
    expect(tokens.size).toBe(20)
    expect(refs.size).toBe(20)
    // Not a counter or a timestamp: tokens share no long common prefix.
    const sorted = [...tokens].sort()
    for (let index = 1; index < sorted.length; index++) {
      let common = 0
      while (sorted[index]![common] === sorted[index - 1]![common]) common++
      expect(common).toBeLessThan(8)
    }
  })

  test('no raw token anywhere in the database (the SQLite file, its -wal and -shm; every row on PostgreSQL)', async ({ privateServer }) => {
    const server = await privateServer('security-tokens')
    const tokens: string[] = []
    for (let index = 0; index < 12; index++) {
      const network = uniqueNetwork()
      const reply = await call(server.url, API.session, { network })
      await expectOk(reply)
      tokens.push(reply.token!)
      // Use each session, so that its token is looked up, not only minted.
      await expectOk(await call(server.url, API.search, { body: { trip: tripFrom(5, 5), travellers: [{ age: 30 }] }, cookie: reply.token!, network }))
    }
    const leaks = (bytes: Buffer) =>
      tokens.filter(
        (token) => bytes.includes(token) || bytes.includes(Buffer.from(token, 'base64url')) || bytes.includes(Buffer.from(token, 'base64url').toString('hex')),
      )
    // While running (the -wal holds the recent writes; the embedded engine writes sessions behind) ...
    await expect.poll(() => countRows(server.dbPath, 'sessions')).toBe(tokens.length)
    const running = await storeBytes(server.dbPath)
    expect(running.length).toBeGreaterThan(0)
    expect(leaks(running)).toEqual([])
    // ... and after a clean stop has checkpointed everything into the main file.
    expect(await server.stop('SIGTERM')).toBe(0)
    expect(leaks(await storeBytes(server.dbPath))).toEqual([])
  })
})
