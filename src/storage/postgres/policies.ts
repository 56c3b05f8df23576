/** @module Policies and their endorsement history on PostgreSQL. Every lookup is scoped to one session. */
import { endorsementFromRow, policyFromRow, type EndorsementRow, type PolicyRow } from '../rows'
import type { PolicyStore } from '../storage'
import { rowLock, type Queryable } from './driver'

/** Inside a transaction (`locking`), a policy read is held against a concurrent correction (FOR UPDATE). */
export function policyStore(sql: Queryable, locking: boolean): PolicyStore {
  return {
    async insert(policy) {
      const [inserted] = await sql<{ id: number }[]>`
        INSERT INTO policies (session_id, ref, svc_insurance_id, plan_id, product, status, trip, travellers,
          partner_reference, currency, premium_minor, created_at, updated_at, source, upstream_ref, document_ready_at,
          document_version, coverage_recorded, coverage_due_at)
        VALUES (${policy.sessionId}, ${policy.ref}, ${policy.svcInsuranceId}, ${policy.planId}, ${policy.product},
          ${policy.status}, ${JSON.stringify(policy.trip)}, ${JSON.stringify(policy.travellers)}, ${policy.partnerReference},
          ${policy.currency}, ${policy.premiumMinor}, ${policy.createdAt}, ${policy.updatedAt}, ${policy.source}, ${policy.upstreamRef},
          ${policy.documentReadyAt}, ${policy.documentVersion}, ${policy.coverageRecorded}, ${policy.coverageDueAt})
        RETURNING id`
      return { ...policy, id: inserted!.id }
    },
    async find(sessionId, ref) {
      const [row] = await sql<PolicyRow[]>`SELECT * FROM policies WHERE session_id = ${sessionId} AND ref = ${ref} ${rowLock(sql, locking, 'update')}`
      return row && policyFromRow(row)
    },
    async endorse(policy, endorsement, sequence) {
      // Sent together (pipelined): one round trip inside the caller's transaction.
      await Promise.all([
        sql`
          UPDATE policies SET status = ${policy.status}, trip = ${JSON.stringify(policy.trip)}, partner_reference = ${policy.partnerReference},
            premium_minor = ${policy.premiumMinor}, updated_at = ${policy.updatedAt}, coverage_due_at = ${policy.coverageDueAt}
          WHERE id = ${policy.id}`,
        sql`
          INSERT INTO endorsements (policy_id, sequence, scenario, changes, premium_change_minor, created_at)
          VALUES (${policy.id}, ${sequence}, ${endorsement.scenario}, ${JSON.stringify(endorsement.changes)},
            ${endorsement.premiumChangeMinor}, ${endorsement.createdAt})`,
      ])
    },
    async endorsements(policyId) {
      const rows = await sql<EndorsementRow[]>`
        SELECT scenario, changes, premium_change_minor, created_at FROM endorsements WHERE policy_id = ${policyId} ORDER BY sequence`
      return rows.map(endorsementFromRow)
    },
    async cancel(policy) {
      const { at, refundMinor, by } = policy.cancellation!
      await sql`
        UPDATE policies SET status = ${policy.status}, cancelled_at = ${at}, refund_minor = ${refundMinor}, cancelled_by = ${by},
          updated_at = ${policy.updatedAt}, coverage_due_at = NULL
        WHERE id = ${policy.id}`
    },
    async update(policy) {
      await sql`
        UPDATE policies SET updated_at = ${policy.updatedAt}, document_ready_at = ${policy.documentReadyAt},
          document_version = ${policy.documentVersion}, coverage_recorded = ${policy.coverageRecorded}, coverage_due_at = ${policy.coverageDueAt}
        WHERE id = ${policy.id}`
    },
    async ofSession(sessionId) {
      const rows = await sql<PolicyRow[]>`SELECT * FROM policies WHERE session_id = ${sessionId} ORDER BY id ${rowLock(sql, locking, 'update')}`
      return rows.map(policyFromRow)
    },
    // Claimed as deliveries are: an instance skips the policies another holds, so each event is recorded
    // once, and the sessions being advanced or swept (their clock or rows about to change).
    async coverageDue(now, limit) {
      const rows = await sql<(PolicyRow & { s_ref: string; s_expires_at: number; s_clock_offset_ms: number })[]>`
        SELECT p.*, s.ref AS s_ref, s.expires_at AS s_expires_at, s.clock_offset_ms AS s_clock_offset_ms
        FROM policies p JOIN sessions s ON s.id = p.session_id
        WHERE p.coverage_due_at <= ${now} AND NOT s.purged AND s.expires_at > ${now}
        ORDER BY p.coverage_due_at, p.id LIMIT ${limit}
        ${locking ? sql`FOR UPDATE OF p SKIP LOCKED FOR SHARE OF s SKIP LOCKED` : sql``}`
      return rows.map((row) => ({
        policy: policyFromRow(row),
        session: { id: row.session_id, ref: row.s_ref, expiresAt: row.s_expires_at, clockOffsetMs: row.s_clock_offset_ms },
      }))
    },
  }
}
