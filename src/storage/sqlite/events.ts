/**
 * @module Events (the outbox), the session's webhook endpoint, and deliveries with their attempts.
 * Every lookup of events is scoped to one session; deliveries are claimed across sessions.
 */
import { deliveryFromRow, eventFromRow, listedEvents, type AttemptRow, type DeliveryRow, type EventRow } from '../rows'
import type { AttemptRecord, Delivery, DeliveryClaim, EventRecord, ListedEvent, NewEvent, Webhook } from '../storage'
import type { SqliteConnection } from './connection'
import { CANDIDATES } from '../storage'

export function eventStore(db: SqliteConnection) {
  const insert = db.prepare<{ id: number }>('INSERT INTO events (ref, session_id, type, at, body) VALUES (?, ?, ?, ?, ?) RETURNING id')
  const queue = db.prepare('INSERT INTO deliveries (event_id, next_at) SELECT ?, ? WHERE EXISTS (SELECT 1 FROM webhooks WHERE session_id = ?)')
  const page = db.prepare<EventRow>(
    `SELECT * FROM events WHERE session_id = ? AND id > ?
       AND id < COALESCE((SELECT MIN(id) FROM events WHERE session_id = ? AND at > ?), 9007199254740991)
     ORDER BY id LIMIT ?`,
  )
  const queued = db.prepare<{ event_id: number; next_at: number | null }>(
    'SELECT event_id, next_at FROM deliveries WHERE event_id IN (SELECT value FROM json_each(?))',
  )
  const attempts = db.prepare<AttemptRow>('SELECT * FROM delivery_attempts WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY event_id, attempt')
  const byRef = db.prepare<EventRow>('SELECT * FROM events WHERE session_id = ? AND ref = ?')
  const requeue = db.prepare(
    `INSERT INTO deliveries (event_id, next_at) VALUES (?, ?)
     ON CONFLICT (event_id) DO UPDATE SET attempts = 0, next_at = excluded.next_at, claimed_until = 0`,
  )
  return {
    append(event: NewEvent): void {
      const { id } = insert.get(event.ref, event.sessionId, event.type, event.at, event.body)!
      queue.run(id, event.deliverAt, event.sessionId)
    },
    list(sessionId: number, afterId: number, now: number, limit: number): ListedEvent[] {
      const rows = page.all(sessionId, afterId, sessionId, now, limit)
      const ids = JSON.stringify(rows.map((row) => row.id))
      return listedEvents(rows, new Map(queued.all(ids).map((row) => [row.event_id, row.next_at])), attempts.all(ids))
    },
    find(sessionId: number, ref: string): EventRecord | undefined {
      const row = byRef.get(sessionId, ref)
      return row && eventFromRow(row)
    },
    requeue(eventId: number, now: number): void {
      requeue.run(eventId, now)
    },
  }
}

export function webhookStore(db: SqliteConnection) {
  const find = db.prepare<Webhook>('SELECT url, secret FROM webhooks WHERE session_id = ?')
  const upsert = db.prepare(
    `INSERT INTO webhooks (session_id, url, secret, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (session_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, created_at = excluded.created_at`,
  )
  const remove = db.prepare('DELETE FROM webhooks WHERE session_id = ?')
  const drop = db.prepare('UPDATE deliveries SET next_at = NULL WHERE next_at IS NOT NULL AND event_id IN (SELECT id FROM events WHERE session_id = ?)')
  return {
    find(sessionId: number): Webhook | undefined {
      return find.get(sessionId)
    },
    set(sessionId: number, webhook: Webhook | null, now: number): void {
      if (webhook) upsert.run(sessionId, webhook.url, webhook.secret, now)
      else {
        remove.run(sessionId)
        drop.run(sessionId)
      }
    },
  }
}

/**
 * Claiming deliveries and recording attempts: the caller runs `claim` and `record` each in a
 * transaction of its own, so that a delivery is claimed once.
 */
export function deliveryQueue(db: SqliteConnection) {
  const anyDue = db.prepare(
    `SELECT 1 FROM deliveries d JOIN events e ON e.id = d.event_id
     WHERE d.next_at <= ? AND d.claimed_until <= ? AND e.session_id NOT IN (SELECT value FROM json_each(?)) LIMIT 1`,
  )
  // The longest due (at most CANDIDATES, so that a claim's cost does not grow with a backlog),
  // numbered within each session, so that one session's backlog takes at most its share of a claim.
  const due = db.prepare<DeliveryRow>(
    `SELECT * FROM (
       SELECT *, ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY next_at, event_id) AS place FROM (
         SELECT d.event_id, e.session_id, d.claimed_until, d.attempts, d.next_at, e.ref, e.type, e.body, w.url, w.secret
         FROM deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.session_id = e.session_id
         WHERE d.next_at <= ? AND d.claimed_until <= ? AND e.session_id NOT IN (SELECT value FROM json_each(?))
         ORDER BY d.next_at LIMIT ${CANDIDATES}))
     WHERE place <= ? ORDER BY next_at, event_id LIMIT ?`,
  )
  const claim = db.prepare('UPDATE deliveries SET claimed_until = ? WHERE event_id = ?')
  const insertAttempt = db.prepare(
    `INSERT INTO delivery_attempts (event_id, attempt, at, status, error)
     SELECT ?, COALESCE(MAX(attempt), 0) + 1, ?, ?, ? FROM delivery_attempts WHERE event_id = ?`,
  )
  const claimOf = db.prepare<{ claimed_until: number }>('SELECT claimed_until FROM deliveries WHERE event_id = ?')
  // An endpoint removed while the attempt was out leaves nothing to try again.
  const advance = db.prepare(
    `UPDATE deliveries SET attempts = attempts + 1, claimed_until = 0,
       next_at = CASE WHEN EXISTS (SELECT 1 FROM events e JOIN webhooks w ON w.session_id = e.session_id WHERE e.id = deliveries.event_id) THEN ? END
     WHERE event_id = ?`,
  )
  return {
    /** A plain read: most polls find nothing due and need not take the write lock (`claim`'s transaction). */
    anyDue(now: number, skip: number[]): boolean {
      return anyDue.get(now, now, JSON.stringify(skip)) !== undefined
    },
    claim(now: number, leaseMs: number, { limit, perSession, skip }: DeliveryClaim): Delivery[] {
      return due.all(now, now, JSON.stringify(skip), perSession, limit).map((row) => {
        claim.run(now + leaseMs, row.event_id)
        return deliveryFromRow({ ...row, claimed_until: now + leaseMs })
      })
    },
    record(eventId: number, lease: number, attempt: Omit<AttemptRecord, 'attempt'>, nextAt: number | null): void {
      const held = claimOf.get(eventId)
      if (!held) return
      insertAttempt.run(eventId, attempt.at, attempt.status, attempt.error, eventId)
      if (held.claimed_until === lease) advance.run(nextAt, eventId)
    },
  }
}
