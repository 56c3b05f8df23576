import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createServices } from '../../src/modules/services'
import { openEmbedded } from '../../src/runtime/bun/sqlite'
import type { SqliteConnection } from '../../src/storage/sqlite/connection'
import { inProcessApp, tripFrom, expectFailure } from './support/app'
import { embeddedStorage } from './support/storage'

/** A driver whose every statement fails with `code` once `broken` is set. */
function breakableDriver(code: string) {
  const db = openEmbedded(':memory:')
  const state = { broken: false }
  const fail = () => {
    if (state.broken) throw Object.assign(new Error(`${code}: disk I/O error`), { code })
  }
  const driver: SqliteConnection = {
    exec: (sql) => (fail(), db.exec(sql)),
    prepare<Row>(sql: string) {
      const statement = db.prepare<Row>(sql)
      return {
        get: (...params) => (fail(), statement.get(...params)),
        all: (...params) => (fail(), statement.all(...params)),
        run: (...params) => (fail(), statement.run(...params)),
      }
    },
    close: () => db.close(),
  }
  return { driver, state }
}

describe('answers when storage fails everywhere', () => {
  test('every answer is still an envelope: 503 storage_unavailable, or the route error with a nominal allowance', async () => {
    const { driver, state } = breakableDriver('SQLITE_IOERR')
    const config = loadConfig({})
    const { storage } = await embeddedStorage(config, driver)
    const app = createApp(createServices({ storage, config, log: () => {} }))
    expect((await app.handle(new Request('http://localhost/api/sandbox/session', { method: 'POST' }))).status).toBe(200)
    // Admission is served from memory: it answers 503 once writing what it holds behind has failed.
    state.broken = true
    await expect(storage.flush()).rejects.toThrow('storage unavailable: SQLITE_IOERR')
    const search = await app.handle(new Request('http://localhost/api/sandbox/plans/search', { method: 'POST' }))
    expect(search.status).toBe(503)
    expect(await search.json()).toMatchObject({ ok: false, error: { code: 'storage_unavailable' }, meta: { rate_limit: { limit: 30 } } })
    const wrongMethod = await app.handle(new Request('http://localhost/api/sandbox/session'))
    expect(wrongMethod.status).toBe(405)
    expect(await wrongMethod.json()).toMatchObject({ ok: false, error: { code: 'method_not_allowed' } })
  })
})

describe('request shapes the router decodes itself', () => {
  test('a policy_ref that does not percent-decode is policy_not_found, like any malformed ref', async () => {
    const sandbox = await inProcessApp()
    const answer = await sandbox.call('policy/%E0%A4%A/modify', { scenario: 'correct_partner_reference', partner_reference: 'BK-1' })
    expectFailure(answer, 404, 'policy_not_found')
  })
})

describe('check order', () => {
  test('limits come before the Idempotency-Key check', async () => {
    const sandbox = await inProcessApp()
    const answer = await sandbox.call(
      'policy/new',
      { plan_id: 'plan_x', trip: tripFrom(sandbox.now(), 2, 200), travellers: [{ age: 30 }] },
      { headers: { 'idempotency-key': 'bad key with spaces' } },
    )
    expect(answer.body.error.code).toBe('trip_too_long')
  })
})

describe('a session that ends while the insurer answers', () => {
  /**
   * An app behind a stand-in insurer, on a clock the test holds; `slowOn` names the insurer call
   * that answers only after the session has ended (two hours later).
   */
  async function gatewayApp() {
    const clock = { now: Date.parse('2026-11-22T10:00:00.000Z'), slowOn: null as 'search' | 'issue' | null }
    const answerLate = (call: 'search' | 'issue') => {
      if (clock.slowOn === call) clock.now += 2 * 3_600_000
    }
    const priced = (await import('../../src/modules/plans/pricing')).priceCatalogue
    const catalogue = (await import('../../src/modules/plans/catalogue')).loadCatalogue()
    const insurer = {
      breakerState: () => 'closed' as const,
      search: async (request: { trip: any; ages: number[]; currency: string }) => {
        answerLate('search')
        return priced(catalogue, request.trip, request.ages, request.currency).map((plan) => ({ ...plan, upstreamRef: 'ACMQ-1' }))
      },
      issue: async () => {
        answerLate('issue')
        return { upstreamRef: 'ACME-UAT-1', premiumMinor: 100 }
      },
      endorse: async () => ({ premiumMinor: 100 }),
      cancel: async () => ({ refundMinor: 100 }),
    }
    const config = loadConfig({})
    const { storage, db } = await embeddedStorage(config)
    const app = createApp(createServices({ storage, config, clock: () => clock.now, log: () => {}, insurer }))
    const post = (path: string, body: unknown, cookie?: string) =>
      app.handle(
        new Request(`http://localhost/api/sandbox/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(cookie && { cookie }) },
          body: JSON.stringify(body),
        }),
      )
    const rows = (table: string) => db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n
    const trip = tripFrom(clock.now, 3, 5)
    const search = await post('plans/search', { trip, travellers: [{ age: 30 }] })
    const cookie = search.headers.getSetCookie()[0]!.split(';')[0]!
    const plan = ((await search.json()) as any).data.plans[0].plan_id as string
    return { clock, post, rows, trip, cookie, plan }
  }

  test('gets no policy written into it: session_expired, nothing stored', async () => {
    const { clock, post, rows, trip, cookie, plan } = await gatewayApp()
    clock.slowOn = 'issue'
    const issued = await post('policy/new', { plan_id: plan, trip, travellers: [{ age: 30 }] }, cookie)
    expect(issued.status).toBe(401)
    expect(((await issued.json()) as any).error.code).toBe('session_expired')
    expect(rows('policies')).toBe(0)
  })

  test('gets no quotes written into it by a search: session_expired, nothing stored', async () => {
    const { clock, post, rows, trip, cookie } = await gatewayApp()
    const before = rows('quotes')
    clock.slowOn = 'search'
    const late = await post('plans/search', { trip, travellers: [{ age: 31 }] }, cookie)
    expect(late.status).toBe(401)
    expect(((await late.json()) as any).error.code).toBe('session_expired')
    expect(rows('quotes')).toBe(before)
  })
})
