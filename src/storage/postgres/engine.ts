/**
 * @module The PostgreSQL engine, for hosted deployments of several instances sharing one database
 * (`SANDBOX_DATABASE_URL`), through postgres.js, which runs on Bun, Node and Deno. Admission is one
 * round trip to `sandbox_admit` (migrations.ts); the sweep claims its batches with SKIP LOCKED, so
 * instances sweeping at once never do the same work or wait for each other. Time comes from the
 * database's clock, so every instance agrees on windows and expiry.
 */
import postgres, { type Sql } from 'postgres'
import { decide, peek, type CounterReading, type WindowPolicy } from '../../domain/rate-window'
import { StorageUnavailable, type Admission, type Storage, type Stores } from '../storage'
import { BATCH, TOMBSTONE_MS, sweepInBatches } from '../sweep'
import { deliveryFromRow, type DeliveryRow } from '../rows'
import { asStorageError } from './faults'
import { migrate } from './migrations'
import { postgresStores } from './stores'
import { inTransaction } from './transaction'

export interface PostgresOptions {
  rateLimit: number
  rateWindowMs: number
  /** Connections in the pool. */
  poolSize?: number
}

/** Runs `work`, turning the database's faults into `StorageUnavailable`. */
async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw asStorageError(error)
  }
}

/** The stores with every call's faults turned into `StorageUnavailable`, as everything else here. */
function guardedStores(stores: Stores): Stores {
  const wrap = <Store extends object>(store: Store): Store =>
    Object.fromEntries(Object.entries(store).map(([name, method]) =>
      [name, (...args: unknown[]) => guarded(() => (method as (...args: unknown[]) => Promise<unknown>)(...args))])) as Store
  return Object.fromEntries(Object.entries(stores).map(([name, store]) => [name, wrap(store)])) as unknown as Stores
}

/**
 * The database's clock: its offset from ours, measured over one round trip (the midpoint), and
 * measured again at every sweep so that drift stays small.
 */
async function databaseClockOffset(sql: Sql<any>): Promise<number> {
  const before = Date.now()
  const [row] = await sql<{ now: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`
  return Math.round(row!.now - (before + Date.now()) / 2)
}

export async function postgresStorage(url: string, options: PostgresOptions): Promise<Storage> {
  const sql = postgres(url, {
    max: options.poolSize ?? 10,
    onnotice: () => {},
    // A database that stops answering, or a lock an instance holds and never releases (a frozen
    // process), answers 503 within seconds instead of holding requests: SQLite's busy_timeout, here.
    connect_timeout: 5,
    connection: { lock_timeout: 5_000, statement_timeout: 10_000, idle_in_transaction_session_timeout: 15_000 },
    // bigint columns hold milliseconds and ids, all far below 2^53.
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } },
  })
  const policy: WindowPolicy = { limit: options.rateLimit, windowMs: options.rateWindowMs }
  let offset = 0
  try {
    await migrate(sql)
    offset = await databaseClockOffset(sql)
  } catch (error) {
    await sql.end({ timeout: 1 })
    throw asStorageError(error)
  }
  const readings = (rows: { used: number; oldest: number | null }[] | null): CounterReading[] =>
    (rows ?? []).map((row) => ({ used: row.used, oldestAt: row.oldest }))

  /**
   * One batch: claim, then delete in later statements. Under READ COMMITTED each statement sees what
   * committed before it started, so rows written by a transaction that committed while the claim ran
   * (a request that held the session, an admission that held the key) are seen and handled.
   */
  async function sweepBatch(now: number) {
    return inTransaction(sql, async (tx) => {
      const claimed = (await tx<{ id: number }[]>`
        SELECT id FROM sessions WHERE NOT purged AND expires_at <= ${now} ORDER BY expires_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`).map((row) => row.id)
      if (claimed.length > 0) {
        await tx`DELETE FROM quotes WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM policies WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM idempotency WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM events WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`DELETE FROM webhooks WHERE session_id = ANY(${claimed}::bigint[])`
        await tx`UPDATE sessions SET purged = true WHERE id = ANY(${claimed}::bigint[])`
      }
      const forgotten = await tx`
        DELETE FROM sessions WHERE id IN (
          SELECT id FROM sessions WHERE purged AND expires_at <= ${now - TOMBSTONE_MS} LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)`
      // Counters whose every hit has left the window, unless an admission holds the key right now (the
      // same advisory lock sandbox_admit takes); a key counted again meanwhile is no longer idle.
      const cutoff = now - options.rateWindowMs
      const keys = (await tx<{ key: string }[]>`
        SELECT key FROM rate_counters WHERE newest <= ${cutoff} AND pg_try_advisory_xact_lock(hashtextextended(key, 0)) LIMIT ${BATCH * 10}`).map((row) => row.key)
      const idle = keys.length === 0 ? [] : await tx<{ key: string; used: number }[]>`
        DELETE FROM rate_counters WHERE key = ANY(${keys}::text[]) AND newest <= ${cutoff} RETURNING key, used`
      if (idle.length > 0) await tx`DELETE FROM rate_hits WHERE key = ANY(${idle.map((row) => row.key)}::text[])`
      return {
        sessionsPurged: claimed.length,
        sessionsForgotten: forgotten.count,
        rateHitsDeleted: idle.reduce((sum, row) => sum + row.used, 0),
        done: claimed.length < BATCH && forgotten.count < BATCH && keys.length < BATCH * 10,
      }
    })
  }

  return {
    ...guardedStores(postgresStores(sql, false)),

    admit: ({ tokenHash, network, now, create: mint }) => guarded(async (): Promise<Admission> => {
      const create = mint?.()
      const [row] = await sql<{ outcome: 'expired' | 'refused' | 'admitted'; session_id: number | null; session_ref: string | null; session_expires: number | null; readings: { used: number; oldest: number | null }[] | null }[]>`
        SELECT * FROM sandbox_admit(${tokenHash}, ${network}, ${now}, ${options.rateWindowMs}, ${options.rateLimit},
          ${create?.ref ?? null}, ${create?.tokenHash ?? null}, ${create?.expiresAt ?? null})`
      if (row!.outcome === 'expired') return { kind: 'expired' }
      const session = row!.session_id === null ? null : { id: row!.session_id, ref: row!.session_ref!, expiresAt: row!.session_expires! }
      const status = decide(readings(row!.readings), policy, now)
      if (row!.outcome === 'refused') return { kind: 'refused', status, session }
      return { kind: 'admitted', status, session, created: create !== undefined && session?.ref === create.ref }
    }),

    openSession: (create, now) => guarded(async () => {
      const [row] = await sql<{ session_id: number }[]>`
        SELECT session_id FROM sandbox_admit(NULL, NULL, ${now}, ${options.rateWindowMs}, ${options.rateLimit}, ${create.ref}, ${create.tokenHash}, ${create.expiresAt})`
      return { id: row!.session_id, ref: create.ref, expiresAt: create.expiresAt }
    }),

    allowance: (keys, now) => guarded(async () => {
      const rows = await sql<{ used: number; oldest: number | null }[]>`
        SELECT r.used, r.oldest FROM unnest(${keys}::text[]) WITH ORDINALITY AS k(key, n), sandbox_rate_reading(k.key, ${now - options.rateWindowMs}) r
        ORDER BY k.n`
      return peek(readings(rows), policy, now)
    }),

    transaction: (work) => guarded(() => inTransaction(sql, (connection) => work(postgresStores(connection, true)))),

    claimDeliveries: (now, leaseMs, limit) => guarded(async () => {
      // Joined before the limit: a row whose endpoint is gone is never claimed, so it cannot hold a place.
      const rows = await sql<DeliveryRow[]>`
        WITH due AS (
          SELECT d.event_id, e.ref, e.type, e.body, w.url, w.secret
          FROM deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.session_id = e.session_id
          WHERE d.next_at <= ${now} AND d.claimed_until <= ${now}
          ORDER BY d.next_at LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED)
        UPDATE deliveries d SET claimed_until = ${now + leaseMs}
        FROM due WHERE d.event_id = due.event_id
        RETURNING d.event_id, d.claimed_until, d.attempts, due.ref, due.type, due.body, due.url, due.secret`
      return rows.map(deliveryFromRow)
    }),

    recordAttempt: (eventId, lease, attempt, nextAt) => guarded(() => inTransaction(sql, async (tx) => {
      // The delivery's row lock orders concurrent records of one event (their attempt numbers).
      const [held] = await tx<{ claimed_until: number }[]>`SELECT claimed_until FROM deliveries WHERE event_id = ${eventId} FOR UPDATE`
      if (!held) return
      await tx`INSERT INTO delivery_attempts (event_id, attempt, at, status, error)
        SELECT ${eventId}, COALESCE(MAX(attempt), 0) + 1, ${attempt.at}, ${attempt.status}, ${attempt.error} FROM delivery_attempts WHERE event_id = ${eventId}`
      if (held.claimed_until !== lease) return
      // An endpoint removed while the attempt was out leaves nothing to try again.
      await tx`
        UPDATE deliveries d SET attempts = attempts + 1, claimed_until = 0,
          next_at = CASE WHEN EXISTS (SELECT 1 FROM events e JOIN webhooks w ON w.session_id = e.session_id WHERE e.id = d.event_id) THEN ${nextAt}::bigint END
        WHERE d.event_id = ${eventId}`
    })),

    sweep: (now) => guarded(async () => {
      offset = await databaseClockOffset(sql)
      return sweepInBatches(sweepBatch, now)
    }),

    // Ready means writable: a standby after a failover answers reads but refuses every admission.
    ping: () => guarded(async () => {
      const [row] = await sql<{ read_only: string }[]>`SELECT current_setting('transaction_read_only') AS read_only`
      if (row!.read_only === 'on') throw new StorageUnavailable('25006 read-only')
    }),

    clock: () => Date.now() + offset,

    close: () => sql.end({ timeout: 5 }),
  }
}
