/**
 * @module Transactions of the SQLite engine: each its own `BEGIN IMMEDIATE … COMMIT`, after the rows
 * memory holds unwritten (write-behind), which a failed transaction keeps for the next one.
 */
import { beforeEach, describe, expect, test } from 'bun:test'
import { openEmbedded } from '../../src/runtime/bun/sqlite'
import type { SqliteConnection } from '../../src/storage/sqlite/connection'
import { sqliteStorage } from '../../src/storage/sqlite/engine'
import { StorageUnavailable, type Storage } from '../../src/storage/storage'
import { fileForEachTest, policyRecord } from './support/storage'

const T0 = 1_800_000_000_000
const HOUR = 3_600_000

const file = fileForEachTest('sandbox-transactions-')
/** Every statement the engine ran through `exec` (BEGIN, COMMIT…), in order. */
let execs: string[]

/** The connection, recording `exec` calls: a transaction's BEGIN and COMMIT are `exec`. */
function recording(connection: SqliteConnection): SqliteConnection {
  return { ...connection, exec: (sql) => (execs.push(sql), connection.exec(sql)) }
}

async function storage(limit = 1000): Promise<Storage> {
  // No timer: what is written behind is written when a test flushes, never in the middle of one.
  const opened = await sqliteStorage(recording(file.db), { rateLimit: limit, rateWindowMs: 600_000, maxMegabytes: 0, writeBehindMs: 0 })
  execs = [] // the migration's own statements
  return opened
}

/** A second connection: what it sees has been committed. */
function committedCount(table: string): number {
  const other = openEmbedded(file.path)
  try {
    return other.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n
  } finally {
    other.close()
  }
}

const newSession = (n: number) => ({ ref: `sbx_${n}`, tokenHash: `hash${n}`, expiresAt: T0 + HOUR })
const begins = () => execs.filter((sql) => sql === 'BEGIN IMMEDIATE').length

beforeEach(() => {
  execs = []
})

/** A policy of the session `sessionId`, for a transaction to insert. */
const policy = (sessionId: number, ref: string) =>
  policyRecord(sessionId, ref, T0, {
    planId: 'p',
    product: 'x',
    trip: { origin_country: 'IN', destination_country: 'FR', start_date: '2027-01-01', end_date: '2027-01-05' },
    travellers: [{ traveller_ref: 't1', age: 30 }],
  })

describe('transactions', () => {
  test('each is its own BEGIN IMMEDIATE … COMMIT, in turn, and is answered once it committed', async () => {
    const store = await storage()
    const opened = await store.openSession(newSession(0), T0)
    await store.flush()
    execs = []
    const seen: number[] = []
    await Promise.all(
      [1, 2, 3, 4].map((n) =>
        store.transaction(({ policies }) => policies.insert(policy(opened.id, `pol_${n}`))).then(() => seen.push(committedCount('policies'))),
      ),
    )
    expect(execs).toEqual(Array(4).fill(['BEGIN IMMEDIATE', 'COMMIT']).flat())
    // Each answer came after its own policy was visible to another connection.
    expect(seen).toEqual([1, 2, 3, 4])
  })

  test("a failing transaction's writes are rolled back, the others' committed", async () => {
    const store = await storage()
    const opened = await store.openSession(newSession(0), T0)
    await store.flush()
    const results = await Promise.allSettled([
      store.transaction(async ({ policies }) => policies.insert(policy(opened.id, 'pol_a'))),
      store.transaction(async ({ policies }) => {
        await policies.insert(policy(opened.id, 'pol_b'))
        throw new Error('refused after writing')
      }),
      store.transaction(async ({ policies }) => policies.insert(policy(opened.id, 'pol_c'))),
    ])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('refused after writing')
    const refs = file.db
      .prepare<{ ref: string }>('SELECT ref FROM policies ORDER BY ref')
      .all()
      .map((row) => row.ref)
    expect(refs).toEqual(['pol_a', 'pol_c'])
  })
})

describe("a session's clock", () => {
  test('memory takes an offset only once the transaction that set it commits; one that rolls back leaves the clock as it was', async () => {
    const store = await storage()
    const opened = await store.openSession(newSession(0), T0)
    const admitted = async () =>
      (await store.admit({ tokenHash: 'hash0', network: 'n:1', now: T0 + 1, create: null })) as { session: { clockOffsetMs: number } }
    await expect(
      store.transaction(async ({ sessions }) => {
        await sessions.setClockOffset(opened.id, 5_000)
        throw new Error('refused after setting it')
      }),
    ).rejects.toThrow('refused after setting it')
    expect(await store.sessions.clockOffset(opened.id, T0)).toBe(0)
    expect((await admitted()).session.clockOffsetMs).toBe(0)
    await store.transaction(({ sessions }) => sessions.setClockOffset(opened.id, 5_000))
    expect((await admitted()).session.clockOffsetMs).toBe(5_000)
    expect(file.db.prepare<{ offset: number }>('SELECT clock_offset_ms AS offset FROM sessions').get()!.offset).toBe(5_000)
  })
})

describe('a transaction SQLite dropped', () => {
  /** The connection, whose policy inserts lose the whole transaction and fail, as SQLITE_FULL or SQLITE_IOERR may. */
  function droppingOnPolicyInsert(connection: SqliteConnection): SqliteConnection {
    return {
      ...connection,
      prepare: <Row>(sql: string) => {
        const statement = connection.prepare<Row>(sql)
        if (!sql.startsWith('INSERT INTO policies')) return statement
        const drop = (): never => {
          connection.exec('ROLLBACK')
          throw new Error('disk I/O error')
        }
        return { get: drop, all: drop, run: drop }
      },
    }
  }

  test('writes sent together after the one that failed do not run: they would commit on their own', async () => {
    const store = await sqliteStorage(droppingOnPolicyInsert(file.db), { rateLimit: 1000, rateWindowMs: 600_000, maxMegabytes: 0, writeBehindMs: 0 })
    const opened = await store.openSession(newSession(0), T0)
    await store.flush()
    const event = { ref: 'evt_after_the_failure', sessionId: opened.id, type: 'policy.issued', at: T0, deliverAt: T0, body: '{}' }
    const written = store.transaction(({ policies, events }) => Promise.all([policies.insert(policy(opened.id, 'pol_1')), events.append(event)]))
    await expect(written).rejects.toThrow()
    expect(committedCount('policies')).toBe(0)
    expect(committedCount('events')).toBe(0)
    // The next transaction starts clean.
    await store.transaction(({ events }) => events.append(event))
    expect(committedCount('events')).toBe(1)
  })
})

describe('write-behind', () => {
  const sessionRefs = () =>
    file.db
      .prepare<{ ref: string }>('SELECT ref FROM sessions ORDER BY id')
      .all()
      .map((row) => row.ref)

  test('admissions write nothing: parallel ones on one network admit exactly the limit, and a flush writes them in one transaction', async () => {
    const store = await storage(3)
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => store.admit({ tokenHash: null, network: 'n:shared', now: T0 + n, create: () => newSession(n) })),
    )
    expect(answers.map((answer) => answer.kind)).toEqual(['admitted', 'admitted', 'admitted', 'refused', 'refused'])
    expect(execs).toEqual([])
    expect(committedCount('sessions')).toBe(0)
    await store.flush()
    expect(execs).toEqual(['BEGIN IMMEDIATE', 'COMMIT'])
    expect(sessionRefs()).toEqual(['sbx_1', 'sbx_2', 'sbx_3'])
    expect(file.db.prepare<{ key: string; used: number }>('SELECT key, used FROM rate_counters ORDER BY key').all()).toEqual([
      { key: 'n:shared', used: 3 },
      { key: 's:sbx_1', used: 1 },
      { key: 's:sbx_2', used: 1 },
      { key: 's:sbx_3', used: 1 },
    ])
    execs = []
    await store.flush() // nothing left to write: no transaction
    expect(execs).toEqual([])
  })

  test("a policy's session and plan are durable with it: the transaction writes the unwritten sessions and quotes first, not the hits", async () => {
    const store = await storage()
    const admission = await store.admit({ tokenHash: null, network: 'n:1', now: T0, create: () => newSession(1) })
    if (admission.kind !== 'admitted') throw new Error('not admitted')
    const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2027-01-01', end_date: '2027-01-05' }
    await store.quotes.record(
      admission.session!.id,
      [{ planId: 'p', product: 'x', trip, ages: [30], currency: 'INR', plan: {}, premiumMinor: 100, source: 'simulation', upstreamRef: null }],
      T0,
    )
    await store.transaction(({ policies }) => policies.insert(policy(admission.session!.id, 'pol_1')))
    expect(committedCount('sessions')).toBe(1)
    expect(committedCount('quotes')).toBe(1)
    expect(committedCount('policies')).toBe(1)
    // Fair-use hits wait for the write-behind: a policy's transaction writes no page for them.
    expect(committedCount('rate_hits')).toBe(0)
    await store.flush()
    expect(committedCount('rate_hits')).toBe(2)
  })

  test('what a failing transaction took is kept for the next one', async () => {
    const store = await storage()
    const admission = await store.admit({ tokenHash: null, network: 'n:1', now: T0, create: () => newSession(1) })
    const id = admission.kind === 'admitted' ? admission.session!.id : 0
    // A failure rolls the whole transaction back, the sessions it wrote first and all.
    await expect(
      store.transaction(async ({ policies }) => {
        await policies.insert(policy(id, 'pol_1'))
        throw new Error('refused after writing')
      }),
    ).rejects.toThrow('refused after writing')
    expect(committedCount('sessions')).toBe(0)
    await store.transaction(({ policies }) => policies.insert(policy(id, 'pol_2')))
    expect(sessionRefs()).toEqual(['sbx_1'])
  })

  test('close writes what is unwritten; the next start knows the sessions and their counters', async () => {
    const first = await storage(2)
    await first.admit({ tokenHash: null, network: 'n:1', now: T0, create: () => newSession(1) })
    await first.admit({ tokenHash: 'hash1', network: 'n:2', now: T0 + 1, create: () => newSession(9) })
    await first.close()
    file.db = openEmbedded(file.path)
    const second = await sqliteStorage(file.db, { rateLimit: 2, rateWindowMs: 600_000, maxMegabytes: 0, writeBehindMs: 0 })
    const again = await second.admit({ tokenHash: 'hash1', network: 'n:3', now: T0 + 2, create: () => newSession(10) })
    // The session's third call in the window: refused, as it would have been without the restart.
    expect(again).toMatchObject({ kind: 'refused', session: { ref: 'sbx_1' } })
    const next = await second.admit({ tokenHash: null, network: 'n:3', now: T0 + 2, create: () => newSession(11) })
    expect(next).toMatchObject({ kind: 'admitted', session: { id: 2, ref: 'sbx_11' } })
  })

  /** A connection whose statements matching `failing` (when set) fail as a full disk does. */
  async function fillable() {
    const state = { failing: null as RegExp | null }
    const check = (sql: string) => {
      if (state.failing?.test(sql.trim())) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
    }
    const connection: SqliteConnection = {
      ...file.db,
      exec: (sql) => (check(sql), file.db.exec(sql)),
      prepare<Row>(sql: string) {
        const statement = file.db.prepare<Row>(sql)
        return { ...statement, get: (...p) => (check(sql), statement.get(...p)), run: (...p) => (check(sql), statement.run(...p)) }
      },
    }
    return { state, store: await sqliteStorage(connection, { rateLimit: 100, rateWindowMs: 600_000, maxMegabytes: 0, writeBehindMs: 0 }) }
  }

  test('a write that fails after BEGIN, or at COMMIT, keeps what it took for the next one, which writes it once', async () => {
    const { state, store } = await fillable()
    await store.admit({ tokenHash: null, network: 'n:1', now: T0, create: () => newSession(1) })
    for (const failing of [/^INSERT INTO sessions/, /^COMMIT/]) {
      state.failing = failing
      await expect(store.flush()).rejects.toBeInstanceOf(StorageUnavailable)
      expect(committedCount('sessions')).toBe(0)
    }
    state.failing = null
    await store.flush()
    expect(sessionRefs()).toEqual(['sbx_1'])
    expect(file.db.prepare<{ key: string; used: number }>('SELECT key, used FROM rate_counters ORDER BY key').all()).toEqual([
      { key: 'n:1', used: 1 },
      { key: 's:sbx_1', used: 1 },
    ])
  })

  test('close writes what is unwritten, and says so when it cannot', async () => {
    const { state, store } = await fillable()
    await store.admit({ tokenHash: null, network: 'n:1', now: T0, create: () => newSession(1) })
    state.failing = /^BEGIN/
    await expect(store.close()).rejects.toBeInstanceOf(StorageUnavailable)
    file.db = openEmbedded(file.path) // close closed the connection all the same
    expect(committedCount('sessions')).toBe(0)
  })

  test('while the file takes no write, admission answers storage_unavailable and memory holds no more', async () => {
    const { state, store } = await fillable()
    await store.admit({ tokenHash: null, network: 'n:1', now: T0, create: () => newSession(1) })
    state.failing = /^(INSERT|UPDATE|DELETE|BEGIN)/
    await expect(store.flush()).rejects.toBeInstanceOf(StorageUnavailable)
    await expect(store.admit({ tokenHash: 'hash1', network: 'n:1', now: T0 + 1, create: null })).rejects.toBeInstanceOf(StorageUnavailable)
    await expect(store.openSession(newSession(2), T0 + 1)).rejects.toBeInstanceOf(StorageUnavailable)
    state.failing = null
    await store.flush()
    expect(await store.admit({ tokenHash: 'hash1', network: 'n:1', now: T0 + 2, create: null })).toMatchObject({ kind: 'admitted', status: { remaining: 98 } })
    expect(sessionRefs()).toEqual(['sbx_1'])
  })
})
