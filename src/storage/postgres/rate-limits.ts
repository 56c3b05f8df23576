/**
 * @module Admission and fair-use counters on PostgreSQL: each admission is one round trip to
 * `sandbox_admit` (migrations.ts), which reads, locks the keys, counts and creates the session in one
 * transaction; the window arithmetic on its readings is the domain's, as on SQLite.
 */
import type { Sql } from 'postgres'
import { decide, peek, type CounterReading, type RateStatus, type WindowPolicy } from '../../domain/rate-window'
import type { Admission, AdmissionRequest, NewSession, SessionRow } from '../storage'

type ReadingRow = { used: number; oldest: number | null }

const readings = (rows: ReadingRow[] | null): CounterReading[] => (rows ?? []).map((row) => ({ used: row.used, oldestAt: row.oldest }))

export function rateLimitStore(sql: Sql<any>, policy: WindowPolicy) {
  return {
    async admit({ tokenHash, network, now, create: mint }: AdmissionRequest): Promise<Admission> {
      const create = mint?.()
      const [row] = await sql<
        {
          outcome: 'expired' | 'refused' | 'admitted'
          session_id: number | null
          session_ref: string | null
          session_expires: number | null
          readings: ReadingRow[] | null
          session_clock_offset: number | null
        }[]
      >`
        SELECT * FROM sandbox_admit(${tokenHash}, ${network}, ${now}, ${policy.windowMs}, ${policy.limit},
          ${create?.ref ?? null}, ${create?.tokenHash ?? null}, ${create?.expiresAt ?? null})`
      if (row!.outcome === 'expired') return { kind: 'expired' }
      const session =
        row!.session_id === null
          ? null
          : { id: row!.session_id, ref: row!.session_ref!, expiresAt: row!.session_expires!, clockOffsetMs: Number(row!.session_clock_offset ?? 0) }
      const status = decide(readings(row!.readings), policy, now)
      if (row!.outcome === 'refused') return { kind: 'refused', status, session }
      return { kind: 'admitted', status, session, created: create !== undefined && session?.ref === create.ref }
    },

    /** Creates the session and counts one request against it: `sandbox_admit` without a network. */
    async openSession(create: NewSession, now: number): Promise<SessionRow> {
      const [row] = await sql<{ session_id: number }[]>`
        SELECT session_id FROM sandbox_admit(NULL, NULL, ${now}, ${policy.windowMs}, ${policy.limit}, ${create.ref}, ${create.tokenHash}, ${create.expiresAt})`
      return { id: row!.session_id, ref: create.ref, expiresAt: create.expiresAt, clockOffsetMs: 0 }
    },

    async peek(keys: string[], now: number): Promise<RateStatus> {
      const rows = await sql<ReadingRow[]>`
        SELECT r.used, r.oldest FROM unnest(${keys}::text[]) WITH ORDINALITY AS k(key, n), sandbox_rate_reading(k.key, ${now - policy.windowMs}) r
        ORDER BY k.n`
      return peek(readings(rows), policy, now)
    },
  }
}
