/** @module Group commit in the SQLite engine: writes joined together share a transaction, each member rolls back alone. */
import { beforeEach, describe, expect, test } from 'bun:test'
import { openEmbedded } from '../../src/storage/drivers/bun'
import type { SqliteConnection } from '../../src/storage/drivers/connection'
import { sqliteDriver } from '../../src/storage/sqlite/driver'
import { sqliteStorage } from '../../src/storage/sqlite/engine'
import type { Storage } from '../../src/storage/storage'
import { fileForEachTest } from './support/storage'

const T0 = 1_800_000_000_000
const HOUR = 3_600_000

const file = fileForEachTest('sandbox-group-')
/** Every statement the engine ran through `exec` (BEGIN, SAVEPOINT, COMMIT…), in order. */
let execs: string[]

/** The connection, recording `exec` calls: transactions and savepoints are all `exec`. */
function recording(connection: SqliteConnection): SqliteConnection {
  return { ...connection, exec: (sql) => (execs.push(sql), connection.exec(sql)) }
}

function storage(limit = 1000): Storage {
  const opened = sqliteStorage(recording(file.db), { rateLimit: limit, rateWindowMs: 600_000, maxMegabytes: 0 })
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

describe('group commit', () => {
  test('writes joined together share one transaction, and each is answered once it committed', async () => {
    const store = storage()
    const seen: number[] = []
    const answers = await Promise.all([1, 2, 3, 4].map((n) =>
      store.admit({ tokenHash: null, network: `n:${n}`, now: T0, create: () => newSession(n) }).then((admission) => {
        seen.push(committedCount('sessions'))
        return admission
      })))
    expect(answers.map((answer) => answer.kind)).toEqual(['admitted', 'admitted', 'admitted', 'admitted'])
    expect(begins()).toBe(1)
    expect(execs.filter((sql) => sql === 'COMMIT')).toHaveLength(1)
    // Every answer came after all four sessions were visible to another connection.
    expect(seen).toEqual([4, 4, 4, 4])
  })

  test('a lone write commits without a savepoint', async () => {
    const store = storage()
    await store.admit({ tokenHash: null, network: 'n:1', now: T0, create: () => newSession(1) })
    expect(execs).toEqual(['BEGIN IMMEDIATE', 'COMMIT'])
  })

  test("a failing member's writes are rolled back, the others' committed", async () => {
    const store = storage()
    const opened = await store.openSession(newSession(0), T0)
    execs = []
    const policy = (ref: string) => ({
      sessionId: opened.id, ref, svcInsuranceId: `svc_${ref}`, planId: 'p', product: 'x', status: 'issued' as const,
      trip: { origin_country: 'IN', destination_country: 'FR', start_date: '2027-01-01', end_date: '2027-01-05' },
      travellers: [{ traveller_ref: 't1', age: 30 }], partnerReference: null, currency: 'INR', premiumMinor: 100,
      createdAt: T0, updatedAt: T0, source: 'simulation' as const, upstreamRef: null, documentReadyAt: T0, cancellation: null,
    })
    const results = await Promise.allSettled([
      store.transaction(async ({ policies }) => policies.insert(policy('pol_a'))),
      store.transaction(async ({ policies }) => {
        await policies.insert(policy('pol_b'))
        throw new Error('refused after writing')
      }),
      store.transaction(async ({ policies }) => policies.insert(policy('pol_c'))),
    ])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('refused after writing')
    expect(begins()).toBe(1)
    const refs = file.db.prepare<{ ref: string }>('SELECT ref FROM policies ORDER BY ref').all().map((row) => row.ref)
    expect(refs).toEqual(['pol_a', 'pol_c'])
  })

  test('a refusal inside a batch counts nothing and creates no session', async () => {
    // Both pass the check outside the lock (the counter is empty); inside the batch the second finds
    // the first's hit and is refused.
    const store = storage(1)
    const answers = await Promise.all([1, 2].map((n) => store.admit({ tokenHash: null, network: 'n:shared', now: T0 + n, create: () => newSession(n) })))
    expect(answers.map((answer) => answer.kind)).toEqual(['admitted', 'refused'])
    expect(begins()).toBe(1)
    expect(file.db.prepare<{ ref: string }>('SELECT ref FROM sessions').all()).toEqual([{ ref: 'sbx_1' }])
    expect(file.db.prepare<{ key: string; used: number }>('SELECT key, used FROM rate_counters ORDER BY key').all())
      .toEqual([{ key: 'n:shared', used: 1 }, { key: 's:sbx_1', used: 1 }])
  })

  test('a refusal read outside the lock joins no transaction', async () => {
    const store = storage(1)
    await store.admit({ tokenHash: null, network: 'n:full', now: T0, create: () => newSession(1) })
    execs = []
    const refused = await store.admit({ tokenHash: null, network: 'n:full', now: T0 + 1, create: () => newSession(2) })
    expect(refused.kind).toBe('refused')
    expect(execs).toEqual([])
  })

  test('when SQLite rolls the whole transaction back, the members before are told, the ones after commit anew', async () => {
    const exec = (sql: string) => () => file.db.prepare(sql).run()
    const join = sqliteDriver(file.db).groupCommit
    const results = await Promise.allSettled([
      join({ work: exec("INSERT INTO sessions (ref, token_hash, created_at, expires_at) VALUES ('sbx_a', 'a', 0, 1)") }),
      join({
        work: () => {
          // What SQLITE_FULL or SQLITE_IOERR may do: the transaction is gone, savepoints with it.
          file.db.exec('ROLLBACK')
          throw new Error('disk full')
        },
      }),
      join({ work: exec("INSERT INTO sessions (ref, token_hash, created_at, expires_at) VALUES ('sbx_c', 'c', 0, 1)") }),
    ])
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'fulfilled'])
    expect(file.db.prepare<{ ref: string }>('SELECT ref FROM sessions').all()).toEqual([{ ref: 'sbx_c' }])
  })
})
