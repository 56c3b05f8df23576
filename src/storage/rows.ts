/**
 * @module The row shapes both engines store (same tables, same columns) and the records they make.
 * Trips, travellers and endorsement changes are stored as JSON text.
 */
import type { EndorsementRecord, PolicyRecord, Source } from './storage'

export interface PolicyRow {
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

export interface EndorsementRow {
  scenario: string
  changes: string
  premium_change_minor: number
  created_at: number
}

export function policyFromRow(row: PolicyRow): PolicyRecord {
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

export function endorsementFromRow(row: EndorsementRow): EndorsementRecord {
  return {
    scenario: row.scenario,
    changes: JSON.parse(row.changes),
    premiumChangeMinor: row.premium_change_minor,
    createdAt: row.created_at,
  }
}
