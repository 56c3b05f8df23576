/**
 * @module The PostgreSQL engine, for hosted deployments of several instances sharing one database
 * (`SANDBOX_DATABASE_URL`). Admission is one round trip to `sandbox_admit` (rate-limits.ts); the sweep
 * claims its batches with SKIP LOCKED (sweep.ts). Inside a transaction, reads that precede a write
 * hold what they read until it ends (each store says what), so every rule stays exact under READ
 * COMMITTED across instances. Time comes from the database's clock, so every instance agrees on
 * windows and expiry.
 */
import type { Sql } from 'postgres'
import { StorageUnavailable, type Storage, type Stores } from '../storage'
import { storesThrough } from '../stores'
import { sweepInBatches } from '../sweep'
import { inTransaction, openPool, STORAGE_DEADLINE_MS, type Queryable } from './driver'
import { deliveryQueue, eventStore, webhookStore } from './events'
import { asStorageError, guarded, guardedWithin } from './faults'
import { idempotencyStore } from './idempotency'
import { migrate } from './migrations'
import { policyStore } from './policies'
import { quoteStore } from './quotes'
import { rateLimitStore } from './rate-limits'
import { requestLogStore, requestLogWriter, WRITE_BEHIND_MS } from './request-log'
import { sessionStore } from './sessions'
import { sweepBatch } from './sweep'

export interface PostgresOptions {
  rateLimit: number
  rateWindowMs: number
  /** Connections in the pool. */
  poolSize?: number
}

/** The stores on the pool, or (`locking`) on a transaction's connection. */
function postgresStores(sql: Queryable, locking: boolean): Stores {
  return {
    sessions: sessionStore(sql, locking),
    quotes: quoteStore(sql),
    policies: policyStore(sql, locking),
    idempotency: idempotencyStore(sql, locking),
    events: eventStore(sql, locking),
    webhooks: webhookStore(sql, locking),
    requestLog: requestLogStore(sql),
  }
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
  const sql = openPool(url, options.poolSize ?? 10)
  let offset = 0
  try {
    await migrate(sql)
    offset = await databaseClockOffset(sql)
  } catch (error) {
    await sql.end({ timeout: 1 })
    throw asStorageError(error)
  }
  const rates = rateLimitStore(sql, { limit: options.rateLimit, windowMs: options.rateWindowMs })
  const deliveries = deliveryQueue(sql)
  const batch = sweepBatch(sql, options.rateWindowMs)
  const calls = requestLogWriter(sql)
  const logTimer = setInterval(() => void calls.flush().catch(() => {}), WRITE_BEHIND_MS)
  ;(logTimer as { unref?: () => void }).unref?.()
  const stores = storesThrough(postgresStores(sql, false), guardedWithin)

  return {
    ...stores,

    // Reading the log writes what this process holds of it first, so a call just answered is listed.
    requestLog: {
      list: (sessionId, query) => guardedWithin(() => calls.flush()).then(() => stores.requestLog.list(sessionId, query)),
      find: (sessionId, requestId) => guardedWithin(() => calls.flush()).then(() => stores.requestLog.find(sessionId, requestId)),
    },

    logCall: (call) => calls.add(call),

    admit: (request) => guardedWithin(() => rates.admit(request)),

    openSession: (create, now) => guardedWithin(() => rates.openSession(create, now)),

    allowance: (keys, now) => guardedWithin(() => rates.peek(keys, now)),

    transaction: (work) => guarded(() => inTransaction(sql, (connection) => work(postgresStores(connection, true)), STORAGE_DEADLINE_MS)),

    claimDeliveries: (now, leaseMs, claim) => guarded(() => deliveries.claim(now, leaseMs, claim)),

    recordAttempt: (eventId, lease, attempt, nextAt) => guarded(() => deliveries.record(eventId, lease, attempt, nextAt)),

    sweep: (now) =>
      guarded(async () => {
        offset = await databaseClockOffset(sql)
        return sweepInBatches(batch, now)
      }),

    flush: () => guarded(() => calls.flush()),

    // Ready means writable: a standby after a failover answers reads but refuses every admission.
    ping: () =>
      guardedWithin(async () => {
        const [row] = await sql<{ read_only: string }[]>`SELECT current_setting('transaction_read_only') AS read_only`
        if (row!.read_only === 'on') throw new StorageUnavailable('25006 read-only')
      }),

    clock: () => Date.now() + offset,

    close: async () => {
      clearInterval(logTimer)
      await calls.flush().catch(() => {})
      await sql.end({ timeout: 5 })
    },
  }
}
