/**
 * @module The SQLite engine (embedded default): one connection on a WAL file, its synchronous
 * statements behind the async seam. Every call waits its turn on that connection (a transaction's
 * awaits must not let another request's statements into it). Writes (admissions, transactions) go
 * through group commit (group-commit.ts): those waiting together (one microtask checkpoint) share
 * one `BEGIN IMMEDIATE`, so check-then-write is atomic across processes sharing the file.
 */
import type { Admission, AdmissionRequest, SessionRow, Storage, Stores } from '../storage'
import { sweepInBatches } from '../sweep'
import { immediate, type SqliteDriver } from './driver'
import { asStorageError } from './faults'
import { groupCommit, type Member } from './group-commit'
import { deliveryQueue, eventStore, webhookStore } from './events'
import { idempotencyStore } from './idempotency'
import { limitSize, migrate } from './migrations'
import { policyStore } from './policies'
import { quoteStore } from './quotes'
import { rateLimitStore } from './rate-limits'
import { sessionStore } from './sessions'
import { sweepBatch } from './sweep'

export interface SqliteOptions {
  rateLimit: number
  rateWindowMs: number
  /** Upper bound on the file in MiB; 0 for none. */
  maxMegabytes: number
}

/** Runs calls one at a time, in order; a call's own awaits hold the turn. */
function oneAtATime() {
  let tail: Promise<unknown> = Promise.resolve()
  return function exclusive<T>(work: () => T | Promise<T>): Promise<T> {
    const turn = tail.then(work)
    tail = turn.catch(() => {})
    return turn.catch((error) => Promise.reject(asStorageError(error)))
  }
}

/** The synchronous stores as the seam's async ones; `run` decides when each call may go. */
function asyncStores(db: SqliteDriver, run: <T>(work: () => T) => Promise<T>): Stores {
  const sessions = sessionStore(db)
  const quotes = quoteStore(db)
  const policies = policyStore(db)
  const idempotency = idempotencyStore(db)
  const events = eventStore(db)
  const webhooks = webhookStore(db)
  return {
    sessions: { isLive: (id, now) => run(() => sessions.isLive(id, now)) },
    quotes: {
      unsaved: (sessionId, given) => run(() => quotes.unsaved(sessionId, given)),
      save: (sessionId, given) => run(() => quotes.save(sessionId, given)),
      find: (sessionId, planId) => run(() => quotes.find(sessionId, planId)),
    },
    policies: {
      insert: (policy) => run(() => policies.insert(policy)),
      find: (sessionId, ref) => run(() => policies.find(sessionId, ref)),
      endorse: (policy, endorsement) => run(() => policies.endorse(policy, endorsement)),
      endorsements: (policyId) => run(() => policies.endorsements(policyId)),
      cancel: (policy) => run(() => policies.cancel(policy)),
    },
    idempotency: {
      find: (sessionId, keyHash) => run(() => idempotency.find(sessionId, keyHash)),
      save: (sessionId, keyHash, print, response, now) => run(() => idempotency.save(sessionId, keyHash, print, response, now)),
    },
    events: {
      append: (event) => run(() => events.append(event)),
      list: (sessionId, afterId, now, limit) => run(() => events.list(sessionId, afterId, now, limit)),
      find: (sessionId, ref) => run(() => events.find(sessionId, ref)),
      requeue: (eventId, now) => run(() => events.requeue(eventId, now)),
    },
    webhooks: {
      find: (sessionId) => run(() => webhooks.find(sessionId)),
      set: (sessionId, webhook, now) => run(() => webhooks.set(sessionId, webhook, now)),
    },
  }
}

export function sqliteStorage(db: SqliteDriver, options: SqliteOptions): Storage {
  migrate(db)
  const withHeadroom = limitSize(db, options.maxMegabytes)
  const exclusive = oneAtATime()
  const sessions = sessionStore(db)
  const rates = rateLimitStore(db, { limit: options.rateLimit, windowMs: options.rateWindowMs })
  const batch = sweepBatch(db, options.rateWindowMs, withHeadroom)
  const join = groupCommit(db, exclusive)
  const deliveries = deliveryQueue(db)

  /**
   * Session expiry and a refusal are read before the batch, outside the write lock; what may be
   * admitted is read again and counted inside it.
   */
  function admission({ tokenHash, network, now, create }: AdmissionRequest): Member<Admission> {
    let live: SessionRow | null = null
    let keys: string[] = []
    return {
      before() {
        const found = tokenHash === null ? undefined : sessions.findByTokenHash(tokenHash)
        if (found && found.expiresAt <= now) return { answer: { kind: 'expired' } }
        live = found ?? null
        keys = live ? [`s:${live.ref}`, network] : [network]
        const refused = rates.refusal(keys, now)
        return refused && { answer: { kind: 'refused', status: refused, session: live } }
      },
      work() {
        const { status, admitted } = rates.admitLocked(keys, now, () => {
          if (live || !create) return { admitted: live }
          const fresh = create()
          const session = sessions.insert(fresh.ref, fresh.tokenHash, now, fresh.expiresAt)
          return { admitted: session, newKey: `s:${session.ref}` }
        })
        if (admitted === undefined) return { kind: 'refused', status, session: live }
        return { kind: 'admitted', status, session: admitted, created: admitted !== live }
      },
    }
  }

  // Inside a transaction the turn is already held: calls go straight to the connection.
  const inTransaction = asyncStores(db, async (work) => {
    try {
      return work()
    } catch (error) {
      throw asStorageError(error)
    }
  })

  return {
    ...asyncStores(db, exclusive),

    admit: (request) => join(admission(request)),

    openSession: (create, now) => join({
      work: () => rates.admitLocked([], now, () => {
        const session = sessions.insert(create.ref, create.tokenHash, now, create.expiresAt)
        return { admitted: session, newKey: `s:${session.ref}` }
      }).admitted!,
    }),

    allowance: (keys, now) => exclusive(() => rates.peek(keys, now)),

    transaction: (work) => join({ work: () => work(inTransaction) }),

    claimDeliveries: (now, leaseMs, limit) => exclusive(() => deliveries.claim(now, leaseMs, limit)),

    recordAttempt: (eventId, lease, attempt, nextAt) => exclusive(() => deliveries.record(eventId, lease, attempt, nextAt)),

    sweep: (now) => sweepInBatches((at) => exclusive(() => batch(at)), now),

    ping: () => exclusive(() => void immediate(db, () => db.prepare('SELECT 1').get())),

    clock: Date.now,

    close: () => exclusive(async () => {
      await db.beforeClose?.()
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      db.close()
    }),
  }
}
