import { describe, expect, test } from 'bun:test'
import { createApp } from '../../src/app'
import { loadConfig } from '../../src/config'
import { createServices } from '../../src/services'
import type { SqliteDriver } from '../../src/storage/driver'
import { openBunSqlite } from '../../src/storage/drivers/bun-sqlite'
import { inProcessApp, tripFrom } from './support/app'

/** A driver whose every statement fails with `code` once `broken` is set. */
function breakableDriver(code: string) {
  const db = openBunSqlite(':memory:')
  const state = { broken: false }
  const fail = () => {
    if (state.broken) throw Object.assign(new Error(`${code}: disk I/O error`), { code })
  }
  const driver: SqliteDriver = {
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
    const app = createApp(createServices({ db: driver, config: loadConfig({}), log: () => {} }))
    state.broken = true
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
    const sandbox = inProcessApp()
    const answer = await sandbox.call('policy/%E0%A4%A/modify', { scenario: 'correct_partner_reference', partner_reference: 'BK-1' })
    expect(answer.status).toBe(404)
    expect(answer.body.error.code).toBe('policy_not_found')
  })
})

describe('check order', () => {
  test('limits come before the Idempotency-Key check', async () => {
    const sandbox = inProcessApp()
    const answer = await sandbox.call('policy/new', { plan_id: 'plan_x', trip: tripFrom(sandbox.now(), 2, 200), travellers: [{ age: 30 }] }, { headers: { 'idempotency-key': 'bad key with spaces' } })
    expect(answer.body.error.code).toBe('trip_too_long')
  })
})

describe('a session that ends while the insurer answers', () => {
  test('gets no policy written into it: session_expired, nothing stored', async () => {
    let now = Date.parse('2026-11-22T10:00:00.000Z')
    const priced = (await import('../../src/modules/plans/pricing')).priceCatalogue
    const catalogue = (await import('../../src/modules/plans/catalogue')).loadCatalogue()
    const insurer = {
      breakerState: () => 'closed' as const,
      search: async (request: { trip: any; ages: number[]; currency: string }) =>
        priced(catalogue, request.trip, request.ages, request.currency).map((plan) => ({ ...plan, upstreamRef: 'ACMQ-1' })),
      issue: async () => {
        now += 2 * 3_600_000 // the insurer takes longer than the session has left
        return { upstreamRef: 'ACME-UAT-1', premiumMinor: 100 }
      },
      endorse: async () => ({ premiumMinor: 100 }),
    }
    const services = createServices({ db: openBunSqlite(':memory:'), config: loadConfig({}), clock: () => now, log: () => {}, insurer })
    const app = createApp(services)
    const post = (path: string, body: unknown, cookie?: string) =>
      app.handle(new Request(`http://localhost/api/sandbox/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie && { cookie }) },
        body: JSON.stringify(body),
      }))
    const trip = tripFrom(now, 3, 5)
    const search = await post('plans/search', { trip, travellers: [{ age: 30 }] })
    const cookie = search.headers.getSetCookie()[0]!.split(';')[0]!
    const plan = ((await search.json()) as any).data.plans[0].plan_id
    const issued = await post('policy/new', { plan_id: plan, trip, travellers: [{ age: 30 }] }, cookie)
    expect(issued.status).toBe(401)
    expect(((await issued.json()) as any).error.code).toBe('session_expired')
    expect(services.db.prepare<{ n: number }>('SELECT COUNT(*) AS n FROM policies').get()!.n).toBe(0)
  })
})
