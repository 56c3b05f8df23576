/**
 * @module The SQLite engine (embedded default): one connection on a WAL file, its synchronous
 * statements behind the async seam. The file serves one process (ownership.ts), so what is
 * re-derivable or merely fair-use (sessions, rate windows, recorded quotes) is served from memory and
 * written behind (write-behind.ts): admission and plan search never wait for a write, and limits
 * are exact by construction. What a caller is told was done (policies, endorsements, cancellations,
 * idempotency records, events) commits before its answer, in a transaction of its own (driver.ts).
 */
import { timed } from '../../stall-trace'
import type { SqliteConnection } from './connection'
import type { Storage, Stores } from '../storage'
import { type Runner, type StoreImplementations, storesThrough } from '../stores'
import { sweepInBatches } from '../sweep'
import { memoryAdmission } from './admission'
import { sqliteDriver } from './driver'
import { deliveryQueue, eventStore, webhookStore } from './events'
import { asStorageError } from './faults'
import { idempotencyStore } from './idempotency'
import { limitSize, migrate } from './migrations'
import { policyStore } from './policies'
import { type QuoteStore, quoteStore } from './quotes'
import { type RequestLog, requestLogStore } from './request-log'
import { rateLog, rateWindows } from './rate-limits'
import { type SessionStore, sessionStore } from './sessions'
import { sweepBatch } from './sweep'
import { unwrittenRows, writeBehind } from './write-behind'

/** A batch that found nothing: how a sweep ends once the storage is closing. */
const NOTHING_SWEPT = { sessionsPurged: 0, sessionsForgotten: 0, rateHitsDeleted: 0, done: true }

export interface SqliteOptions {
  rateLimit: number
  rateWindowMs: number
  /** Upper bound on the file in MiB; 0 for none. */
  maxMegabytes: number
  /** How often what memory serves is written behind (write-behind.ts); 0: only when flushed (tests). */
  writeBehindMs?: number
}

/** The stores over the file; sessions and quotes as memory serves them. */
function engineStores(db: SqliteConnection, sessions: SessionStore, quotes: QuoteStore, requestLog: RequestLog): StoreImplementations {
  return {
    sessions: {
      isLive: sessions.isLive,
      clockOffset: sessions.clockOffset,
      setClockOffset: sessions.setClockOffset,
      byRef: sessions.byRef,
    },
    quotes: {
      unsaved: quotes.unsaved,
      find: quotes.find,
      record: (sessionId, given, now) => {
        if (!sessions.isLive(sessionId, now)) return false
        quotes.record(sessionId, given)
        return true
      },
    },
    policies: policyStore(db),
    idempotency: idempotencyStore(db),
    events: eventStore(db),
    webhooks: webhookStore(db),
    requestLog: { list: requestLog.list, find: requestLog.find },
  }
}

/**
 * The stores as a transaction's work sees them. The turn is already held: calls go straight to the
 * connection. Once one of its calls fails, its later calls fail without running, as on PostgreSQL:
 * SQLite may have dropped the whole transaction (SQLITE_FULL, SQLITE_IOERR), and a statement run
 * after that would commit on its own. Writes sent together (`Promise.all`) are all called before any
 * is awaited. Transactions take turns, so one failure at a time is tracked.
 */
function transactionStores(stores: StoreImplementations) {
  let failed: unknown = null
  const guarded = storesThrough(stores, async (call) => {
    if (failed) throw failed
    try {
      return await call()
    } catch (error) {
      throw (failed = asStorageError(error))
    }
  })
  return {
    /** The stores for a new transaction: no call of it has failed yet. */
    fresh(): Stores {
      failed = null
      return guarded
    },
  }
}

export async function sqliteStorage(db: SqliteConnection, options: SqliteOptions): Promise<Storage> {
  const driver = sqliteDriver(db)
  await migrate(driver)
  const withHeadroom = limitSize(db, options.maxMegabytes)
  const sessions = sessionStore(db)
  const quotes = quoteStore(db)
  const rates = rateWindows({ limit: options.rateLimit, windowMs: options.rateWindowMs })
  const hitLog = rateLog(db, options.rateWindowMs)
  rates.load(hitLog.recent(Date.now()))
  const requestLog = requestLogStore(db)
  const unwritten = unwrittenRows({ sessions, quotes, rates, rateLog: hitLog, requestLog })
  const behind = writeBehind(
    () =>
      driver.transaction(
        () => {},
        () => unwritten.write(true),
        'write-behind',
      ),
    unwritten.isEmpty,
    options.writeBehindMs,
  )
  /** Commits what memory holds, with the request log's calls of this session (or all) that otherwise wait their time. */
  const logWritten = (sessionId?: number) => {
    requestLog.wantWritten(sessionId)
    return behind.flush()
  }
  const batch = sweepBatch(db, options.rateWindowMs, (sessionId) => {
    sessions.forget(sessionId)
    quotes.forget(sessionId)
  })
  const deliveries = deliveryQueue(db)
  const stores = engineStores(db, sessions, quotes, requestLog)
  // Timed for the stall trace: a read holds the thread as a transaction does.
  const inTurn: Runner = (work) => driver.provideConnection(() => timed('read', work))
  let closing = false

  const inTransaction = transactionStores(stores)
  const through = storesThrough(stores, inTurn)

  return {
    ...through,

    // A console link of a session opened a moment ago finds it: memory's sessions are written first.
    sessions: {
      ...through.sessions,
      byRef: async (ref, now) => {
        await behind.flush()
        return inTurn(() => sessions.byRef(ref, now))
      },
    },

    // Reading the log writes what memory holds of it first, so a call just answered is listed.
    requestLog: {
      list: async (sessionId, query) => {
        await logWritten(sessionId)
        return inTurn(() => requestLog.list(sessionId, query))
      },
      find: async (sessionId, requestId) => {
        await logWritten(sessionId)
        return inTurn(() => requestLog.find(sessionId, requestId))
      },
    },

    logCall: (call) => requestLog.add(call),

    ...memoryAdmission({ sessions, rates, failure: behind.failure, inTurn }),

    // What a transaction writes may refer to sessions and quotes memory holds: they are written first.
    // Memory takes a session's clock offset only once the transaction that set it has committed.
    transaction: (work) =>
      driver.transaction(
        () => work(inTransaction.fresh()),
        () => {
          const written = unwritten.write(false)
          return {
            committed: sessions.offsetsCommitted,
            rolledBack: () => {
              written.rolledBack()
              sessions.offsetsRolledBack()
            },
          }
        },
        'request transaction',
      ),

    claimDeliveries: async (now, leaseMs, claim) =>
      (await inTurn(() => deliveries.anyDue(now, claim.skip)))
        ? driver.transaction(() => deliveries.claim(now, leaseMs, claim), undefined, 'delivery claim')
        : [],

    recordAttempt: (eventId, lease, attempt, nextAt) =>
      driver.transaction(() => deliveries.record(eventId, lease, attempt, nextAt), undefined, 'delivery attempt'),

    sweep: async (now) => {
      // What memory holds goes first, so the sweep sees every session; a full file is swept all the same.
      await behind.flush().catch(() => {})
      // A sweep still running at shutdown stops at its next batch, before the connection closes.
      const swept = await sweepInBatches(
        (at) => (closing ? Promise.resolve(NOTHING_SWEPT) : driver.transaction(() => withHeadroom(() => batch(at)), undefined, 'sweep batch')),
        now,
        db.checkpointer?.settled,
      )
      timed('rate windows forgotten', () => rates.forgetIdle(now))
      return swept
    },

    flush: () => logWritten(),

    ping: () => driver.transaction((connection) => void connection.prepare('SELECT 1').get()),

    clock: Date.now,

    close: async () => {
      closing = true
      behind.stop()
      requestLog.wantWritten()
      try {
        await behind.flush(true)
      } finally {
        await driver.destroy()
      }
    },
  }
}
