/** @module Policies and their endorsement history. Every lookup is scoped to one session. */
import type { Trip } from '../domain/trip'
import type { Source } from './quotes'
import type { SqliteDriver } from './driver'

export interface PolicyRecord {
  id: number
  sessionId: number
  ref: string
  svcInsuranceId: string
  planId: string
  product: string
  status: 'issued' | 'endorsed'
  trip: Trip
  travellers: { traveller_ref: string; age: number }[]
  partnerReference: string | null
  currency: string
  premiumMinor: number
  createdAt: number
  updatedAt: number
  source: Source
  /** The insurer's policy number for a UAT policy: stored, never shown. */
  upstreamRef: string | null
}

export interface EndorsementRecord {
  scenario: string
  changes: Record<string, { from: string | null; to: string }>
  premiumChangeMinor: number
  createdAt: number
}

interface PolicyRow {
  id: number
  session_id: number
  ref: string
  svc_insurance_id: string
  plan_id: string
  product: string
  status: 'issued' | 'endorsed'
  trip: string
  travellers: string
  partner_reference: string | null
  currency: string
  premium_minor: number
  created_at: number
  updated_at: number
  source: Source
  upstream_ref: string | null
}

export function policyStore(db: SqliteDriver) {
  const insert = db.prepare<{ id: number }>(
    `INSERT INTO policies (session_id, ref, svc_insurance_id, plan_id, product, status, trip, travellers,
       partner_reference, currency, premium_minor, created_at, updated_at, source, upstream_ref)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  )
  const byRef = db.prepare<PolicyRow>('SELECT * FROM policies WHERE session_id = ? AND ref = ?')
  const update = db.prepare(
    `UPDATE policies SET status = ?, trip = ?, partner_reference = ?, premium_minor = ?, updated_at = ? WHERE id = ?`,
  )
  const endorse = db.prepare<{ sequence: number }>(
    `INSERT INTO endorsements (policy_id, sequence, scenario, changes, premium_change_minor, created_at)
     SELECT ?, COALESCE(MAX(sequence), 0) + 1, ?, ?, ?, ? FROM endorsements WHERE policy_id = ?
     RETURNING sequence`,
  )
  const history = db.prepare<{ scenario: string; changes: string; premium_change_minor: number; created_at: number }>(
    'SELECT scenario, changes, premium_change_minor, created_at FROM endorsements WHERE policy_id = ? ORDER BY sequence',
  )

  return {
    insert(policy: Omit<PolicyRecord, 'id'>): PolicyRecord {
      const { id } = insert.get(policy.sessionId, policy.ref, policy.svcInsuranceId, policy.planId, policy.product,
        policy.status, JSON.stringify(policy.trip), JSON.stringify(policy.travellers), policy.partnerReference,
        policy.currency, policy.premiumMinor, policy.createdAt, policy.updatedAt, policy.source, policy.upstreamRef)!
      return { ...policy, id }
    },
    find(sessionId: number, ref: string): PolicyRecord | undefined {
      const row = byRef.get(sessionId, ref)
      return row && fromRow(row)
    },
    /** Saves the policy's new state and appends the endorsement; answers its sequence number. */
    endorse(policy: PolicyRecord, endorsement: EndorsementRecord): number {
      update.run(policy.status, JSON.stringify(policy.trip), policy.partnerReference, policy.premiumMinor,
        policy.updatedAt, policy.id)
      return endorse.get(policy.id, endorsement.scenario, JSON.stringify(endorsement.changes),
        endorsement.premiumChangeMinor, endorsement.createdAt, policy.id)!.sequence
    },
    endorsements(policyId: number): EndorsementRecord[] {
      return history.all(policyId).map((row) => ({
        scenario: row.scenario,
        changes: JSON.parse(row.changes),
        premiumChangeMinor: row.premium_change_minor,
        createdAt: row.created_at,
      }))
    },
  }
}

function fromRow(row: PolicyRow): PolicyRecord {
  return {
    id: row.id,
    sessionId: row.session_id,
    ref: row.ref,
    svcInsuranceId: row.svc_insurance_id,
    planId: row.plan_id,
    product: row.product,
    status: row.status,
    trip: JSON.parse(row.trip),
    travellers: JSON.parse(row.travellers),
    partnerReference: row.partner_reference,
    currency: row.currency,
    premiumMinor: row.premium_minor,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    source: row.source,
    upstreamRef: row.upstream_ref,
  }
}
