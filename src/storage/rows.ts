/**
 * @module The row shapes both engines store (same tables, same columns) and the records they make.
 * Trips, ages, plans, travellers and endorsement changes are stored as JSON text.
 */
import type { AttemptRecord, Delivery, EndorsementRecord, EventRecord, ListedEvent, PolicyRecord, Quote, Source } from './storage'

export interface QuoteRow {
  plan_id: string
  trip: string
  ages: string
  currency: string
  /** The plan, its product and its premium, as one JSON text. */
  plan: string
  source: Source
  upstream_ref: string | null
}

export function quoteToRow(quote: Quote): QuoteRow {
  return {
    plan_id: quote.planId,
    trip: JSON.stringify(quote.trip),
    ages: JSON.stringify(quote.ages),
    currency: quote.currency,
    plan: JSON.stringify({ product: quote.product, plan: quote.plan, premiumMinor: quote.premiumMinor }),
    source: quote.source,
    upstream_ref: quote.upstreamRef,
  }
}

export function quoteFromRow<Plan>(row: QuoteRow): Quote<Plan> {
  const { product, plan, premiumMinor } = JSON.parse(row.plan) as { product: string; plan: Plan; premiumMinor: number }
  return {
    planId: row.plan_id,
    product,
    plan,
    premiumMinor,
    trip: JSON.parse(row.trip),
    ages: JSON.parse(row.ages),
    currency: row.currency,
    source: row.source,
    upstreamRef: row.upstream_ref,
  }
}

/** The quotes a session's saved rows do not hold as given (new, or from another source): what saving changes. */
export function unsavedQuotes(given: Quote[], saved: Pick<QuoteRow, 'plan_id' | 'source' | 'upstream_ref'>[]): Quote[] {
  const byPlanId = new Map(saved.map((row) => [row.plan_id, row]))
  return given.filter((quote) => {
    const row = byPlanId.get(quote.planId)
    return row?.source !== quote.source || row.upstream_ref !== quote.upstreamRef
  })
}

export interface PolicyRow {
  id: number
  session_id: number
  ref: string
  svc_insurance_id: string
  plan_id: string
  product: string
  status: PolicyRecord['status']
  trip: string
  travellers: string
  partner_reference: string | null
  currency: string
  premium_minor: number
  created_at: number
  updated_at: number
  source: Source
  upstream_ref: string | null
  document_ready_at: number
  cancelled_at: number | null
  refund_minor: number | null
  cancelled_by: 'partner' | 'insurer' | null
  document_version: number
  coverage_recorded: number
  coverage_due_at: number | null
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
    documentReadyAt: row.document_ready_at,
    cancellation: row.cancelled_at === null ? null : { at: row.cancelled_at, refundMinor: row.refund_minor!, by: row.cancelled_by ?? 'partner' },
    documentVersion: row.document_version,
    coverageRecorded: row.coverage_recorded as PolicyRecord['coverageRecorded'],
    coverageDueAt: row.coverage_due_at,
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

export interface EventRow {
  id: number
  ref: string
  session_id: number
  type: string
  at: number
  body: string
}

export interface AttemptRow extends AttemptRecord {
  event_id: number
}

export function eventFromRow(row: EventRow): EventRecord {
  return { id: row.id, ref: row.ref, sessionId: row.session_id, type: row.type, at: row.at, body: row.body }
}

/** Events with their deliveries: `queued` maps an event id to its delivery's next attempt time. */
export function listedEvents(rows: EventRow[], queued: Map<number, number | null>, attempts: AttemptRow[]): ListedEvent[] {
  return rows.map((row) => ({
    ...eventFromRow(row),
    delivery: queued.has(row.id)
      ? {
          nextAt: queued.get(row.id)!,
          attempts: attempts.filter((attempt) => attempt.event_id === row.id).map(({ attempt, at, status, error }) => ({ attempt, at, status, error })),
        }
      : null,
  }))
}

export interface DeliveryRow {
  event_id: number
  session_id: number
  claimed_until: number
  attempts: number
  ref: string
  type: string
  body: string
  url: string
  secret: string
}

export function deliveryFromRow(row: DeliveryRow): Delivery {
  return {
    eventId: row.event_id,
    sessionId: row.session_id,
    lease: row.claimed_until,
    attempt: row.attempts + 1,
    ref: row.ref,
    type: row.type,
    body: row.body,
    webhook: { url: row.url, secret: row.secret },
  }
}
