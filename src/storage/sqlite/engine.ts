/**
 * @module The SQLite engine (embedded default): one connection on a WAL file, its synchronous
 * statements behind the async seam. Every call waits its turn on that connection, and writes
 * (admissions, transactions) go through group commit (driver.ts): those waiting together share one
 * `BEGIN IMMEDIATE`. The file serves one process (ownership.ts): limits, idempotency and sequences
 * are exact because this connection's turn orders every check-then-write.
 */
import type { SqliteConnection } from '../drivers/connection'
import type { Admission, AdmissionRequest, SessionRow, Storage } from '../storage'
import { guarded, storesAround, type SynchronousStores } from '../stores'
import { sweepInBatches } from '../sweep'
import { inTransaction, sqliteDriver, type Member } from './driver'
import { deliveryQueue, eventStore, webhookStore } from './events'
import { asStorageError } from './faults'
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

export function sqliteStorage(db: SqliteConnection, options: SqliteOptions): Storage {
  migrate(db)
  const withHeadroom = limitSize(db, options.maxMegabytes)
  const driver = sqliteDriver(db)
  const sessions = sessionStore(db)
  const rates = rateLimitStore(db, { limit: options.rateLimit, windowMs: options.rateWindowMs })
  const batch = sweepBatch(db, options.rateWindowMs, withHeadroom)
  const deliveries = deliveryQueue(db)
  const stores: SynchronousStores = {
    sessions: { isLive: sessions.isLive },
    quotes: quoteStore(db),
    policies: policyStore(db),
    idempotency: idempotencyStore(db),
    events: eventStore(db),
    webhooks: webhookStore(db),
  }
  const inTurn = <T>(work: () => T) => driver.provideConnection(work)

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
  const inTransactionStores = storesAround(stores, (call) => guarded(call, asStorageError))

  return {
    ...storesAround(stores, inTurn),

    admit: (request) => driver.groupCommit(admission(request)),

    openSession: (create, now) => driver.groupCommit({
      work: () => rates.admitLocked([], now, () => {
        const session = sessions.insert(create.ref, create.tokenHash, now, create.expiresAt)
        return { admitted: session, newKey: `s:${session.ref}` }
      }).admitted!,
    }),

    allowance: (keys, now) => inTurn(() => rates.peek(keys, now)),

    transaction: (work) => driver.groupCommit({ work: () => work(inTransactionStores) }),

    claimDeliveries: (now, leaseMs, limit) => inTurn(() => deliveries.claim(now, leaseMs, limit)),

    recordAttempt: (eventId, lease, attempt, nextAt) => inTurn(() => deliveries.record(eventId, lease, attempt, nextAt)),

    sweep: (now) => sweepInBatches((at) => inTurn(() => batch(at)), now),

    ping: () => inTurn(() => void inTransaction(db, () => db.prepare('SELECT 1').get())),

    clock: Date.now,

    close: () => driver.destroy(),
  }
}
