/** @module Policies and their endorsement history. Every lookup is scoped to one session. */
import { endorsementFromRow, policyFromRow, type EndorsementRow, type PolicyRow } from '../rows'
import type { EndorsementRecord, PolicyRecord, SessionRow } from '../storage'
import type { SqliteConnection } from './connection'

/**
 * Policies whose cover events wall time has brought due, in live sessions. CROSS JOIN: policies
 * first, through their due time's index. Left to choose, SQLite went through every live session's
 * policies and sorted them, once a second on the request thread: 17 ms at 7,000 policies, and
 * growing (bench/findings.md, 2026-11-27).
 */
export const COVERAGE_DUE = `SELECT p.*, s.ref AS s_ref, s.expires_at AS s_expires_at, s.clock_offset_ms AS s_clock_offset_ms
  FROM policies p CROSS JOIN sessions s ON s.id = p.session_id
  WHERE p.coverage_due_at <= ? AND s.purged = 0 AND s.expires_at > ? ORDER BY p.coverage_due_at, p.id LIMIT ?`

export function policyStore(db: SqliteConnection) {
  const insert = db.prepare<{ id: number }>(
    `INSERT INTO policies (session_id, ref, svc_insurance_id, plan_id, product, status, trip, travellers,
       partner_reference, currency, premium_minor, created_at, updated_at, source, upstream_ref, document_ready_at,
       document_version, coverage_recorded, coverage_due_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  )
  const byRef = db.prepare<PolicyRow>('SELECT * FROM policies WHERE session_id = ? AND ref = ?')
  const update = db.prepare(
    `UPDATE policies SET status = ?, trip = ?, partner_reference = ?, premium_minor = ?, updated_at = ?, coverage_due_at = ? WHERE id = ?`,
  )
  const cancel = db.prepare(
    `UPDATE policies SET status = ?, cancelled_at = ?, refund_minor = ?, cancelled_by = ?, updated_at = ?, coverage_due_at = NULL WHERE id = ?`,
  )
  const progress = db.prepare(
    `UPDATE policies SET updated_at = ?, document_ready_at = ?, document_version = ?, coverage_recorded = ?, coverage_due_at = ? WHERE id = ?`,
  )
  const bySession = db.prepare<PolicyRow>('SELECT * FROM policies WHERE session_id = ? ORDER BY id')
  const due = db.prepare<PolicyRow & { s_ref: string; s_expires_at: number; s_clock_offset_ms: number }>(COVERAGE_DUE)
  // The caller numbers the endorsement: an INSERT … SELECT MAX(sequence) from the same table took
  // 60 µs of a correction in the loaded server, ten times the policy's UPDATE (bench/findings.md).
  const endorse = db.prepare(
    `INSERT INTO endorsements (policy_id, sequence, scenario, changes, premium_change_minor, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  )
  const history = db.prepare<EndorsementRow>(
    'SELECT scenario, changes, premium_change_minor, created_at FROM endorsements WHERE policy_id = ? ORDER BY sequence',
  )

  return {
    insert(policy: Omit<PolicyRecord, 'id'>): PolicyRecord {
      const { id } = insert.get(
        policy.sessionId,
        policy.ref,
        policy.svcInsuranceId,
        policy.planId,
        policy.product,
        policy.status,
        JSON.stringify(policy.trip),
        JSON.stringify(policy.travellers),
        policy.partnerReference,
        policy.currency,
        policy.premiumMinor,
        policy.createdAt,
        policy.updatedAt,
        policy.source,
        policy.upstreamRef,
        policy.documentReadyAt,
        policy.documentVersion,
        policy.coverageRecorded,
        policy.coverageDueAt,
      )!
      return { ...policy, id }
    },
    find(sessionId: number, ref: string): PolicyRecord | undefined {
      const row = byRef.get(sessionId, ref)
      return row && policyFromRow(row)
    },
    /** Saves the policy's new state and appends the endorsement as number `sequence` (storage.ts). */
    endorse(policy: PolicyRecord, endorsement: EndorsementRecord, sequence: number): void {
      update.run(policy.status, JSON.stringify(policy.trip), policy.partnerReference, policy.premiumMinor, policy.updatedAt, policy.coverageDueAt, policy.id)
      endorse.run(policy.id, sequence, endorsement.scenario, JSON.stringify(endorsement.changes), endorsement.premiumChangeMinor, endorsement.createdAt)
    },
    endorsements(policyId: number): EndorsementRecord[] {
      return history.all(policyId).map(endorsementFromRow)
    },
    cancel(policy: PolicyRecord): void {
      const { at, refundMinor, by } = policy.cancellation!
      cancel.run(policy.status, at, refundMinor, by, policy.updatedAt, policy.id)
    },
    update(policy: PolicyRecord): void {
      progress.run(policy.updatedAt, policy.documentReadyAt, policy.documentVersion, policy.coverageRecorded, policy.coverageDueAt, policy.id)
    },
    ofSession(sessionId: number): PolicyRecord[] {
      return bySession.all(sessionId).map(policyFromRow)
    },
    coverageDue(now: number, limit: number): { policy: PolicyRecord; session: SessionRow }[] {
      return due.all(now, now, limit).map((row) => ({
        policy: policyFromRow(row),
        session: { id: row.session_id, ref: row.s_ref, expiresAt: row.s_expires_at, clockOffsetMs: row.s_clock_offset_ms },
      }))
    },
  }
}
