/**
 * @module Events (the outbox), the session's webhook endpoint, and deliveries with their attempts,
 * on PostgreSQL. Every lookup of events is scoped to one session; deliveries are claimed across
 * sessions and instances (SKIP LOCKED).
 */
import type { Sql } from 'postgres'
import { deliveryFromRow, eventFromRow, listedEvents, type AttemptRow, type DeliveryRow, type EventRow } from '../rows'
import { CANDIDATES, type AttemptRecord, type Delivery, type DeliveryClaim, type EventStore, type Webhook, type WebhookStore } from '../storage'
import { inTransaction, rowLock, type Queryable } from './driver'

export function eventStore(sql: Queryable, locking: boolean): EventStore {
  return {
    // One round trip. Events of one session are written one transaction at a time (the advisory
    // lock, taken before the insert since the insert reads its row), so their ids follow commit
    // order and a cursor never passes one that commits later. The webhook is looked up for the row
    // inserted, so after the lock; as of the statement's start (an endpoint registered while it
    // waited gets the next event, as one registered a moment later would).
    async append(event) {
      const turn = locking ? sql`SELECT pg_advisory_xact_lock(hashtextextended(${`events ${event.sessionId}`}, 0))` : sql`SELECT 1`
      await sql`
        WITH turn AS (${turn}),
        inserted AS (
          INSERT INTO events (ref, session_id, type, at, body)
          SELECT ${event.ref}::text, ${event.sessionId}::bigint, ${event.type}::text, ${event.at}::bigint, ${event.body}::text FROM turn
          RETURNING id, session_id)
        INSERT INTO deliveries (event_id, next_at) SELECT inserted.id, ${event.deliverAt}::bigint FROM inserted
        WHERE EXISTS (SELECT 1 FROM webhooks WHERE webhooks.session_id = inserted.session_id ${rowLock(sql, locking, 'share')})`
    },
    async list(sessionId, afterId, now, limit) {
      const rows = await sql<EventRow[]>`
        SELECT * FROM events WHERE session_id = ${sessionId} AND id > ${afterId}
          AND id < COALESCE((SELECT MIN(id) FROM events WHERE session_id = ${sessionId} AND at > ${now}), 9007199254740991)
        ORDER BY id LIMIT ${limit}`
      const ids = rows.map((row) => row.id)
      const queued = await sql<{ event_id: number; next_at: number | null }[]>`SELECT event_id, next_at FROM deliveries WHERE event_id = ANY(${ids}::bigint[])`
      const attempts = await sql<AttemptRow[]>`SELECT * FROM delivery_attempts WHERE event_id = ANY(${ids}::bigint[]) ORDER BY event_id, attempt`
      return listedEvents(rows, new Map(queued.map((row) => [row.event_id, row.next_at])), attempts)
    },
    async find(sessionId, ref) {
      const [row] = await sql<EventRow[]>`SELECT * FROM events WHERE session_id = ${sessionId} AND ref = ${ref}`
      return row && eventFromRow(row)
    },
    async requeue(eventId, now) {
      await sql`
        INSERT INTO deliveries (event_id, next_at) VALUES (${eventId}, ${now})
        ON CONFLICT (event_id) DO UPDATE SET attempts = 0, next_at = excluded.next_at, claimed_until = 0`
    },
  }
}

export function webhookStore(sql: Queryable, locking: boolean): WebhookStore {
  return {
    async find(sessionId) {
      // Held until the transaction ends: a removal then waits, and sees the delivery this one queues.
      const [row] = await sql<Webhook[]>`SELECT url, secret FROM webhooks WHERE session_id = ${sessionId} ${rowLock(sql, locking, 'share')}`
      return row
    },
    async set(sessionId, webhook, now) {
      if (webhook) {
        await sql`
          INSERT INTO webhooks (session_id, url, secret, created_at) VALUES (${sessionId}, ${webhook.url}, ${webhook.secret}, ${now})
          ON CONFLICT (session_id) DO UPDATE SET url = excluded.url, secret = excluded.secret, created_at = excluded.created_at`
        return
      }
      await sql`DELETE FROM webhooks WHERE session_id = ${sessionId}`
      await sql`UPDATE deliveries SET next_at = NULL WHERE next_at IS NOT NULL AND event_id IN (SELECT id FROM events WHERE session_id = ${sessionId})`
    },
  }
}

/** Claiming deliveries and recording attempts: a claimed row is skipped by every other instance until its lease ends. */
export function deliveryQueue(sql: Sql<any>) {
  return {
    async claim(now: number, leaseMs: number, { limit, perSession, skip }: DeliveryClaim): Promise<Delivery[]> {
      // Joined before the limit: a row whose endpoint is gone is never claimed, so it cannot hold a
      // place. The longest due (at most CANDIDATES: a claim's cost does not grow with a backlog),
      // numbered within each session first (a window and FOR UPDATE cannot share a SELECT), so that
      // one session's backlog takes at most its share of a claim.
      const rows = await sql<DeliveryRow[]>`
        WITH candidates AS (
          SELECT d.event_id, e.session_id, d.next_at
          FROM deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.session_id = e.session_id
          WHERE d.next_at <= ${now} AND d.claimed_until <= ${now} AND NOT (e.session_id = ANY(${skip}::bigint[]))
          ORDER BY d.next_at LIMIT ${CANDIDATES}),
        ranked AS (
          SELECT event_id, ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY next_at, event_id) AS place FROM candidates),
        due AS (
          SELECT d.event_id, e.session_id, e.ref, e.type, e.body, w.url, w.secret
          FROM deliveries d JOIN ranked r ON r.event_id = d.event_id JOIN events e ON e.id = d.event_id
            JOIN webhooks w ON w.session_id = e.session_id
          WHERE r.place <= ${perSession} AND d.next_at <= ${now} AND d.claimed_until <= ${now}
          ORDER BY d.next_at, d.event_id LIMIT ${limit} FOR UPDATE OF d SKIP LOCKED)
        UPDATE deliveries d SET claimed_until = ${now + leaseMs}
        FROM due WHERE d.event_id = due.event_id
        RETURNING d.event_id, due.session_id, d.claimed_until, d.attempts, due.ref, due.type, due.body, due.url, due.secret`
      return rows.map(deliveryFromRow)
    },
    record: (eventId: number, lease: number, attempt: Omit<AttemptRecord, 'attempt'>, nextAt: number | null) =>
      inTransaction(sql, async (tx) => {
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
      }),
  }
}
