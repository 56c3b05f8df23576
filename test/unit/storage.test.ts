import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { openEmbedded } from '../../src/runtime/bun/sqlite'
import type { SqliteConnection } from '../../src/storage/sqlite/connection'
import { idempotencyStore } from '../../src/storage/sqlite/idempotency'
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/storage/sqlite/migrations'
import { COVERAGE_DUE, policyStore } from '../../src/storage/sqlite/policies'
import { sessionStore } from '../../src/storage/sqlite/sessions'
import { StorageUnavailable, type SweepResult } from '../../src/storage/storage'
import { TOMBSTONE_MS } from '../../src/domain/session-tombstone'
import { sweepInBatches } from '../../src/storage/sweep'
import { sweepBatch } from '../../src/storage/sqlite/sweep'
import { writeBehind } from '../../src/storage/sqlite/write-behind'
import { rateLimiter } from './support/rate-limits'
import { committed, fileForEachTest, migrated, policyRecord, seedQuotes, seedSession } from './support/storage'

const WINDOW_MS = 600_000

/** The SQLite sweep's batch, and the whole sweep made of it. */
function sweeper(connection: SqliteConnection, windowMs: number) {
  const sweptBatch = sweepBatch(connection, windowMs)
  const batch = (now: number) => {
    let swept: ReturnType<typeof sweptBatch> | undefined
    committed(connection, () => void (swept = sweptBatch(now)))
    return swept!
  }
  return { batch, sweep: (now: number) => sweepInBatches(async (at) => batch(at), now) }
}
const T0 = 1_800_000_000_000

const file = fileForEachTest('sandbox-unit-')

const count = (table: string, where = '1', ...params: (string | number)[]) =>
  file.db.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get(...params)!.n

/** Hits recorded for a key (or all keys); the key's running total must agree with them. */
function hits(key?: string): number {
  const where = key === undefined ? '1' : 'key = ?'
  const params = key === undefined ? [] : [key]
  const recorded = file.db.prepare<{ n: number | null }>(`SELECT SUM(hits) AS n FROM rate_hits WHERE ${where}`).get(...params)!.n ?? 0
  const total = file.db.prepare<{ n: number | null }>(`SELECT SUM(used) AS n FROM rate_counters WHERE ${where}`).get(...params)!.n ?? 0
  expect(total).toBe(recorded)
  return recorded
}

/** Hits as an older build or a long-idle key leaves them: one per instant, with the key's total. */
function seedHits(key: string, instants: number[]) {
  const hit = file.db.prepare('INSERT INTO rate_hits (key, at, hits) VALUES (?, ?, 1)')
  for (const at of instants) hit.run(key, at)
  file.db
    .prepare('INSERT INTO rate_counters (key, used, oldest, newest) VALUES (?, ?, ?, ?)')
    .run(key, instants.length, Math.min(...instants), Math.max(...instants))
}

describe('the coverage poll', () => {
  test('reads only the policies due, through their due time, not every policy of every live session', () => {
    const plan = file.db
      .prepare<{ detail: string }>(`EXPLAIN QUERY PLAN ${COVERAGE_DUE}`)
      .all(0, 0, 1)
      .map((step) => step.detail)
    expect(plan[0]).toContain('USING INDEX policies_coverage_due')
    expect(plan.join('\n')).not.toContain('TEMP B-TREE')
  })
})

describe('the write-behind', () => {
  test('a round that met the write lock keeps admission open; a full file stops it until a round succeeds', async () => {
    let outcome: 'busy' | 'full' | 'written' = 'busy'
    const behind = writeBehind(
      async () => {
        if (outcome === 'busy') throw new StorageUnavailable('SQLITE_BUSY')
        if (outcome === 'full') throw new StorageUnavailable('SQLITE_FULL')
      },
      () => false,
      0,
    )
    await expect(behind.flush()).rejects.toBeInstanceOf(StorageUnavailable)
    expect(behind.failure()).toBeNull()
    outcome = 'full'
    await expect(behind.flush()).rejects.toBeInstanceOf(StorageUnavailable)
    expect(behind.failure()?.reason).toBe('SQLITE_FULL')
    outcome = 'written'
    await behind.flush()
    expect(behind.failure()).toBeNull()
  })
})

describe('migrations', () => {
  test('set user_version to the schema version', () => {
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(1)
    expect(file.db.prepare<{ user_version: number }>('PRAGMA user_version').get()!.user_version).toBe(SCHEMA_VERSION)
  })

  test('are idempotent: migrating again, or from another connection, changes nothing and loses nothing', async () => {
    seedSession(file.db, 'sbx_a', 'hash-a', T0, T0 + 1)
    const tables = () => file.db.prepare<{ name: string }>("SELECT name FROM sqlite_master WHERE type IN ('table','index') ORDER BY name").all()
    const before = tables()
    await migrated(file.db)
    const other = openEmbedded(file.path)
    await migrated(other)
    other.close()
    expect(tables()).toEqual(before)
    expect(count('sessions')).toBe(1)
    expect(file.db.prepare<{ user_version: number }>('PRAGMA user_version').get()!.user_version).toBe(SCHEMA_VERSION)
  })

  test('3 keeps the rate hits of a version-2 file: a restart after an upgrade resets no counter', async () => {
    const old = join(file.dir, 'v2.db')
    const v2 = openEmbedded(old)
    for (const sql of MIGRATIONS.slice(0, 2)) v2.exec(sql)
    v2.exec('PRAGMA user_version = 2')
    const hit = v2.prepare('INSERT INTO rate_hits (key, at) VALUES (?, ?)')
    for (const at of [T0, T0, T0 + 1]) hit.run('n:net', at)
    await migrated(v2)
    const rates = rateLimiter(v2, { limit: 5, windowMs: WINDOW_MS })
    expect(rates.peek(['n:net'], T0 + 2)).toMatchObject({ remaining: 2, resetAt: T0 + WINDOW_MS })
    expect(rates.peek(['n:net'], T0 + WINDOW_MS)).toMatchObject({ remaining: 4 })
    v2.close()
  })

  test('refuse a database newer than this build', async () => {
    file.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`)
    await expect(migrated(file.db)).rejects.toThrow(/newer/)
  })

  test('the file is in WAL mode with foreign keys on', () => {
    expect(file.db.prepare<{ journal_mode: string }>('PRAGMA journal_mode').get()!.journal_mode).toBe('wal')
    expect(file.db.prepare<{ foreign_keys: number }>('PRAGMA foreign_keys').get()!.foreign_keys).toBe(1)
  })
})

describe('rate windows', () => {
  const policy = { limit: 5, windowMs: WINDOW_MS }

  test('never admits more than the limit, and records nothing for refused calls', () => {
    const rates = rateLimiter(file.db, policy)
    let admittedCalls = 0
    const results = Array.from({ length: 12 }, (_, i) =>
      rates.admit(['s:one', 'n:1.2.3.4'], T0 + i, () => {
        admittedCalls++
        return { admitted: i }
      }),
    )
    expect(results.filter((r) => r.status.admitted)).toHaveLength(5)
    expect(results.slice(0, 5).every((r) => r.admitted !== undefined)).toBe(true)
    expect(results.slice(5).every((r) => r.admitted === undefined && !r.status.admitted)).toBe(true)
    expect(admittedCalls).toBe(5)
    expect(results.map((r) => r.status.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    expect(hits('s:one')).toBe(5)
    expect(hits('n:1.2.3.4')).toBe(5)
  })

  test('a full network counter refuses a fresh session, and counts neither', () => {
    const rates = rateLimiter(file.db, policy)
    for (let i = 0; i < 5; i++) rates.admit([`s:${i}`, 'n:net'], T0, () => ({ admitted: true }))
    const refused = rates.admit(['s:new', 'n:net'], T0 + 10, () => ({ admitted: true }))
    expect(refused.status.admitted).toBe(false)
    expect(hits('s:new')).toBe(0)
    expect(hits('n:net')).toBe(5)
  })

  test('a rollback inside onAdmit records no hit', () => {
    const rates = rateLimiter(file.db, policy)
    expect(() =>
      rates.admit(['s:x'], T0, () => {
        throw new Error('boom')
      }),
    ).toThrow('boom')
    expect(hits()).toBe(0)
  })

  test('the window rolls: the oldest hit stops counting exactly one window later', () => {
    const rates = rateLimiter(file.db, policy)
    for (let i = 0; i < 5; i++) rates.admit(['k'], T0 + i * 1000, () => ({ admitted: true }))
    const refused = rates.admit(['k'], T0 + WINDOW_MS - 1, () => ({ admitted: true }))
    expect(refused.status).toMatchObject({ admitted: false, resetAt: T0 + WINDOW_MS, retryAfter: 1 })
    expect(rates.admit(['k'], T0 + WINDOW_MS, () => ({ admitted: true })).status.admitted).toBe(true)
    expect(rates.admit(['k'], T0 + WINDOW_MS, () => ({ admitted: true })).status.admitted).toBe(false)
    expect(rates.admit(['k'], T0 + WINDOW_MS + 1000, () => ({ admitted: true })).status.admitted).toBe(true)
  })

  test('peek counts nothing', () => {
    const rates = rateLimiter(file.db, policy)
    rates.admit(['k'], T0, () => ({ admitted: true }))
    expect(rates.peek(['k'], T0 + 1)).toMatchObject({ remaining: 4, resetAt: T0 + WINDOW_MS })
    expect(rates.peek(['k'], T0 + 1).remaining).toBe(4)
    expect(hits()).toBe(1)
  })

  test('hits that left the window stop counting at once; the log drops them by the tenth of a second when the key counts again', () => {
    const rates = rateLimiter(file.db, policy)
    for (let i = 0; i < 5; i++) rates.admit(['k'], T0 + 99 + i, () => ({ admitted: true }))
    rates.admit(['k'], T0 + 110, () => ({ admitted: true })) // refused: full
    // Logged at the end of their tenth: T0 + 99 and T0 + 100 at T0 + 100, the other three at T0 + 200.
    expect(file.db.prepare<{ at: number; hits: number }>('SELECT at, hits FROM rate_hits ORDER BY at').all()).toEqual([
      { at: T0 + 100, hits: 2 },
      { at: T0 + 200, hits: 3 },
    ])
    // Three of the five leave the window; nothing has pruned them yet, and they no longer count.
    expect(rates.peek(['k'], T0 + WINDOW_MS + 101)).toMatchObject({ remaining: 3, resetAt: T0 + 102 + WINDOW_MS })
    expect(rates.admit(['k'], T0 + WINDOW_MS + 101, () => ({ admitted: true })).status).toMatchObject({ admitted: true, remaining: 2 })
    // The log keeps whole tenths: the one of T0 + 102 (three hits), and the new one.
    expect(hits('k')).toBe(4)
  })

  test('a request counted after a later one (it read the clock first) stays in the window no shorter', async () => {
    const rates = rateLimiter(file.db, policy)
    rates.admit(['k'], T0 + 3_000, () => ({ admitted: true }))
    rates.admit(['k'], T0, () => ({ admitted: true }))
    // Counted with the later one: both leave the window together, one window after T0 + 3 s.
    expect(rates.peek(['k'], T0 + WINDOW_MS + 1_000)).toMatchObject({ remaining: 3, resetAt: T0 + 3_000 + WINDOW_MS })
    await sweeper(file.db, WINDOW_MS).sweep(T0 + WINDOW_MS + 1_000)
    expect(hits('k')).toBe(2)
    expect(rates.peek(['k'], T0 + 3_000 + WINDOW_MS).remaining).toBe(5)
  })

  test('a restart resets no counter: the windows are read back from the log, without what left them', () => {
    const before = rateLimiter(file.db, policy)
    before.admit(['k'], T0, () => ({ admitted: true }))
    for (let i = 0; i < 3; i++) before.admit(['k', 'n:x'], T0 + 1_000 + i, () => ({ admitted: true }))
    const after = rateLimiter(file.db, policy, T0 + WINDOW_MS)
    // T0 left the window at T0 + W; the three later hits still count, on both keys.
    expect(after.peek(['k'], T0 + WINDOW_MS)).toMatchObject({ remaining: 2, resetAt: T0 + 1_000 + WINDOW_MS })
    expect(after.peek(['n:x'], T0 + WINDOW_MS).remaining).toBe(2)
    expect(after.admit(['k'], T0 + WINDOW_MS, () => ({ admitted: true })).status.remaining).toBe(1)
    expect(after.admit(['k'], T0 + WINDOW_MS, () => ({ admitted: true })).status.remaining).toBe(0)
    expect(after.admit(['k'], T0 + WINDOW_MS, () => ({ admitted: true })).status.admitted).toBe(false)
  })

  test('requests in the same millisecond each count', () => {
    const rates = rateLimiter(file.db, policy)
    const statuses = Array.from({ length: 6 }, () => rates.admit(['k'], T0, () => ({ admitted: true })).status)
    expect(statuses.map((status) => status.admitted)).toEqual([true, true, true, true, true, false])
    expect(hits('k')).toBe(5)
    expect(count('rate_hits')).toBe(1)
  })
})

describe('sweep', () => {
  /** A session with a quote, a policy with an endorsement, and an idempotency row. */
  function seedOwner(ref: string, expiresAt: number) {
    const session = seedSession(file.db, ref, `hash-${ref}`, expiresAt - 3_600_000, expiresAt)
    const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2026-07-01', end_date: '2026-07-10' }
    seedQuotes(file.db, session.id, [
      {
        planId: `plan_${ref}`,
        product: 'intl_standard',
        trip,
        ages: [30],
        currency: 'INR',
        plan: {},
        premiumMinor: 100,
        source: 'simulation',
        upstreamRef: null,
      },
    ])
    const policies = policyStore(file.db)
    const policy = policies.insert(policyRecord(session.id, `pol_${ref}`, T0, { svcInsuranceId: `svc_${ref}`, planId: `plan_${ref}`, trip }))
    policies.endorse({ ...policy, status: 'endorsed' }, { scenario: 'extend_end_date', changes: {}, premiumChangeMinor: 0, createdAt: T0 }, 1)
    idempotencyStore(file.db).save(session.id, 'key', 'print', { ok: true }, T0)
    return session
  }

  const owned = (sessionId: number) => ({
    quotes: count('quotes', 'session_id = ?', sessionId),
    policies: count('policies', 'session_id = ?', sessionId),
    endorsements: count('endorsements', 'policy_id IN (SELECT id FROM policies WHERE session_id = ?)', sessionId),
    idempotency: count('idempotency', 'session_id = ?', sessionId),
  })
  const FULL = { quotes: 1, policies: 1, endorsements: 1, idempotency: 1 }
  const NONE = { quotes: 0, policies: 0, endorsements: 0, idempotency: 0 }

  test("deletes an expired session's data, keeps its token hash for 24 h, then forgets it", async () => {
    const expired = seedOwner('old', T0)
    const live = seedOwner('live', T0 + 1)
    const { sweep } = sweeper(file.db, WINDOW_MS)
    const endorsementsBefore = count('endorsements')

    const first = await sweep(T0)
    expect(first.sessionsPurged).toBe(1)
    expect(owned(expired.id)).toEqual(NONE)
    expect(count('endorsements')).toBe(endorsementsBefore - 1)
    expect(sessionStore(file.db).read('hash-old', T0)).toEqual({ id: expired.id, ref: 'old', expiresAt: T0, clockOffsetMs: 0 })
    expect(owned(live.id)).toEqual(FULL)

    // Still there one millisecond before the 24 hours are up.
    await sweep(T0 + TOMBSTONE_MS - 1)
    expect(sessionStore(file.db).read('hash-old', T0)).toBeDefined()
    expect(owned(live.id)).toEqual(NONE) // by now the other one has expired and been purged too

    const last = await sweep(T0 + TOMBSTONE_MS)
    expect(last.sessionsForgotten).toBe(1)
    expect(sessionStore(file.db).read('hash-old', T0)).toBeUndefined()
    expect(sessionStore(file.db).read('hash-live', T0)).toBeDefined()
  })

  test('leaves live sessions untouched', async () => {
    const live = seedOwner('live', T0 + 60_000)
    const result = await sweeper(file.db, WINDOW_MS).sweep(T0)
    expect(result).toEqual({ sessionsPurged: 0, sessionsForgotten: 0, rateHitsDeleted: 0 })
    expect(owned(live.id)).toEqual(FULL)
    expect(sessionStore(file.db).read('hash-live', T0)).toEqual({ id: live.id, ref: 'live', expiresAt: T0 + 60_000, clockOffsetMs: 0 })
  })

  test('a purged session read by a request that read the clock before the sweep is not live, and not remembered as live', async () => {
    const session = seedOwner('late', T0)
    await sweeper(file.db, WINDOW_MS).sweep(T0)
    const sessions = sessionStore(file.db)
    // The request read T0 - 1 (still running by its clock); the sweep purged the session meanwhile.
    expect(sessions.read('hash-late', T0 - 1)).toEqual({ id: session.id, ref: 'late', expiresAt: T0, clockOffsetMs: 0 })
    expect(sessions.cached('hash-late')).toBeUndefined()
    expect(sessions.isLive(session.id, T0 - 1)).toBe(false)
  })

  test('a session expires at its expiry instant, not a millisecond later', async () => {
    const session = seedOwner('edge', T0)
    await sweeper(file.db, WINDOW_MS).sweep(T0 - 1)
    expect(owned(session.id)).toEqual(FULL)
    await sweeper(file.db, WINDOW_MS).sweep(T0)
    expect(owned(session.id)).toEqual(NONE)
  })

  /**
   * Seeds in one transaction, then checks that one batch sweeps some of the `total` rows but not all,
   * and the sweep the rest; answers the sweep.
   */
  async function sweptInBatches(seed: () => void, counted: keyof SweepResult, total: number) {
    committed(file.db, seed)
    const { batch, sweep } = sweeper(file.db, WINDOW_MS)
    const one = batch(T0)
    expect(one[counted]).toBeGreaterThan(0)
    expect(one[counted]).toBeLessThan(total)
    const rest = await sweep(T0)
    expect(one[counted] + rest[counted]).toBe(total)
    return sweep
  }

  test('purges expired sessions in bounded batches until none is left', async () => {
    const sweep = await sweptInBatches(
      () => {
        for (let i = 0; i < 1_234; i++) {
          const s = seedSession(file.db, `b${i}`, `hb${i}`, T0 - 10, T0 - 1)
          seedQuotes(file.db, s.id, [
            { planId: 'p', product: 'x', trip: {} as never, ages: [], currency: 'INR', plan: {}, premiumMinor: 0, source: 'simulation', upstreamRef: null },
          ])
        }
      },
      'sessionsPurged',
      1_234,
    )
    expect(count('quotes')).toBe(0)
    expect(count('sessions')).toBe(1_234) // tombstones kept

    const forgotten = await sweep(T0 + TOMBSTONE_MS)
    expect(forgotten.sessionsForgotten).toBe(1_234)
    expect(count('sessions')).toBe(0)
  })

  test('forgets idle rate counters in bounded batches until none is left', async () => {
    await sweptInBatches(
      () => {
        for (let i = 0; i < 12_000; i++) seedHits(`k${i}`, [T0 - WINDOW_MS - (i % 7)])
      },
      'rateHitsDeleted',
      12_000,
    )
    expect(hits()).toBe(0)
    expect(count('rate_counters')).toBe(0)
  })

  test('deletes rate hits that left the window and keeps those still in it', async () => {
    seedHits('k', [T0 - WINDOW_MS - 5_000, T0 - WINDOW_MS /* left the window exactly now */, T0 - WINDOW_MS + 1, T0])
    const result = await sweeper(file.db, WINDOW_MS).sweep(T0)
    expect(result.rateHitsDeleted).toBe(2)
    expect(
      file.db
        .prepare<{ at: number }>('SELECT at FROM rate_hits ORDER BY at')
        .all()
        .map((r) => r.at),
    ).toEqual([T0 - WINDOW_MS + 1, T0])
    expect(hits('k')).toBe(2)
    // The sweep agrees with the counter: what it keeps is exactly what still counts.
    expect(rateLimiter(file.db, { limit: 30, windowMs: WINDOW_MS }).peek(['k'], T0)).toMatchObject({ remaining: 28, resetAt: T0 + 1 })
  })
})

describe('rate limit: a new key named on admission', () => {
  test('is counted with the others, and a refused request names none', () => {
    const rates = rateLimiter(file.db, { limit: 2, windowMs: 60_000 })
    expect(rates.admit(['n:x'], T0, () => ({ admitted: 1, newKey: 's:new' })).status.remaining).toBe(1)
    expect(rates.peek(['s:new'], T0).remaining).toBe(1)
    let called = 0
    rates.admit(['n:x'], T0 + 1, () => ({ admitted: ++called, newKey: 's:second' }))
    const refused = rates.admit(['n:x'], T0 + 2, () => ({ admitted: ++called, newKey: 's:third' }))
    expect(refused.status.admitted).toBe(false)
    expect(called).toBe(1)
    expect(rates.peek(['s:third'], T0 + 2).remaining).toBe(2)
  })
})
