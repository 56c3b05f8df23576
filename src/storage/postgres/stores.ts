/**
 * @module The stores on PostgreSQL. Inside a transaction (`locking`), reads that precede a write hold
 * what they read until the transaction ends: the session against the sweep (FOR SHARE), the policy
 * against a concurrent correction (FOR UPDATE), an idempotency key against a concurrent first use
 * (advisory lock), so every rule stays exact under READ COMMITTED across instances.
 */
import type { Sql } from 'postgres'
import type { Connection } from './transaction'
import {
  endorsementFromRow, eventFromRow, listedEvents, policyFromRow, quoteFromRow, quoteToRow, unsavedQuotes,
  type AttemptRow, type EndorsementRow, type EventRow, type PolicyRow, type QuoteRow,
} from '../rows'
import type { Stores, Webhook } from '../storage'

export function postgresStores(sql: Sql<any> | Connection, locking: boolean): Stores {
  // Fragments are made per query: postgres.js runs a fragment as part of the query it is placed in.
  const forShare = () => (locking ? sql`FOR SHARE` : sql``)
  const forUpdate = () => (locking ? sql`FOR UPDATE` : sql``)
  return {
    sessions: {
      async isLive(id, now) {
        const rows = await sql`SELECT 1 FROM sessions WHERE id = ${id} AND expires_at > ${now} AND NOT purged ${forShare()}`
        return rows.length > 0
      },
    },

    quotes: {
      async unsaved(sessionId, given) {
        if (given.length === 0) return []
        const rows = await sql<Pick<QuoteRow, 'plan_id' | 'source' | 'upstream_ref'>[]>`
          SELECT plan_id, source, upstream_ref FROM quotes
          WHERE session_id = ${sessionId} AND plan_id = ANY(${given.map((quote) => quote.planId)}::text[])`
        return unsavedQuotes(given, rows)
      },
      async save(sessionId, given) {
        const rows = given.map((quote) => ({ session_id: sessionId, ...quoteToRow(quote) }))
        await sql`
          INSERT INTO quotes ${sql(rows)}
          ON CONFLICT (session_id, plan_id) DO UPDATE SET plan = excluded.plan, source = excluded.source, upstream_ref = excluded.upstream_ref`
      },
      async find(sessionId, planId) {
        const [row] = await sql<QuoteRow[]>`
          SELECT plan_id, trip, ages, currency, plan, source, upstream_ref FROM quotes WHERE session_id = ${sessionId} AND plan_id = ${planId}`
        return row && quoteFromRow(row)
      },
    },

    policies: {
      async insert(policy) {
        const [inserted] = await sql<{ id: number }[]>`
          INSERT INTO policies (session_id, ref, svc_insurance_id, plan_id, product, status, trip, travellers,
            partner_reference, currency, premium_minor, created_at, updated_at, source, upstream_ref, document_ready_at)
          VALUES (${policy.sessionId}, ${policy.ref}, ${policy.svcInsuranceId}, ${policy.planId}, ${policy.product},
            ${policy.status}, ${JSON.stringify(policy.trip)}, ${JSON.stringify(policy.travellers)}, ${policy.partnerReference},
            ${policy.currency}, ${policy.premiumMinor}, ${policy.createdAt}, ${policy.updatedAt}, ${policy.source}, ${policy.upstreamRef},
            ${policy.documentReadyAt})
          RETURNING id`
        return { ...policy, id: inserted!.id }
      },
      async find(sessionId, ref) {
        const [row] = await sql<PolicyRow[]>`SELECT * FROM policies WHERE session_id = ${sessionId} AND ref = ${ref} ${forUpdate()}`
        return row && policyFromRow(row)
      },
      async endorse(policy, endorsement) {
        await sql`
          UPDATE policies SET status = ${policy.status}, trip = ${JSON.stringify(policy.trip)}, partner_reference = ${policy.partnerReference},
            premium_minor = ${policy.premiumMinor}, updated_at = ${policy.updatedAt}
          WHERE id = ${policy.id}`
        const [appended] = await sql<{ sequence: number }[]>`
          INSERT INTO endorsements (policy_id, sequence, scenario, changes, premium_change_minor, created_at)
          SELECT ${policy.id}, COALESCE(MAX(sequence), 0) + 1, ${endorsement.scenario}, ${JSON.stringify(endorsement.changes)},
            ${endorsement.premiumChangeMinor}, ${endorsement.createdAt}
          FROM endorsements WHERE policy_id = ${policy.id}
          RETURNING sequence`
        return appended!.sequence
      },
      async endorsements(policyId) {
        const rows = await sql<EndorsementRow[]>`
          SELECT scenario, changes, premium_change_minor, created_at FROM endorsements WHERE policy_id = ${policyId} ORDER BY sequence`
        return rows.map(endorsementFromRow)
      },
      async cancel(policy) {
        const { at, refundMinor } = policy.cancellation!
        await sql`
          UPDATE policies SET status = ${policy.status}, cancelled_at = ${at}, refund_minor = ${refundMinor}, updated_at = ${policy.updatedAt}
          WHERE id = ${policy.id}`
      },
    },

    events: {
      async append(event) {
        // Events of one session are written one transaction at a time, so their ids follow commit
        // order and a cursor never passes one that commits later.
        if (locking) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`events ${event.sessionId}`}, 0))`
        const [inserted] = await sql<{ id: number }[]>`
          INSERT INTO events (ref, session_id, type, at, body) VALUES (${event.ref}, ${event.sessionId}, ${event.type}, ${event.at}, ${event.body})
          RETURNING id`
        await sql`
          INSERT INTO deliveries (event_id, next_at) SELECT ${inserted!.id}, ${event.at}
          WHERE EXISTS (SELECT 1 FROM webhooks WHERE session_id = ${event.sessionId} ${forShare()})`
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
    },

    webhooks: {
      async find(sessionId) {
        // Held until the transaction ends: a removal then waits, and sees the delivery this one queues.
        const [row] = await sql<Webhook[]>`SELECT url, secret FROM webhooks WHERE session_id = ${sessionId} ${forShare()}`
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
    },

    idempotency: {
      async find(sessionId, keyHash) {
        if (locking) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`idem ${sessionId} ${keyHash}`}, 0))`
        const [row] = await sql<{ fingerprint: string; response: string }[]>`
          SELECT fingerprint, response FROM idempotency WHERE session_id = ${sessionId} AND key = ${keyHash}`
        return row && { fingerprint: row.fingerprint, response: JSON.parse(row.response) }
      },
      async save(sessionId, keyHash, print, response, now) {
        await sql`
          INSERT INTO idempotency (session_id, key, fingerprint, response, created_at)
          VALUES (${sessionId}, ${keyHash}, ${print}, ${JSON.stringify(response)}, ${now})`
      },
    },
  }
}
