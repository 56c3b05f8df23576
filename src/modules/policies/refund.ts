/**
 * @module The refund rules of a cancellation: pure functions of the policy's trip, its current
 * premium and the day of cancelling (UTC), so a preview and the cancel that follows it on the same
 * day give the same refund, on every runtime and engine.
 */
import { toDayNumber } from '../../domain/dates'
import type { Trip } from '../../domain/trip'

export const REFUND_RULES = ['full_before_start', 'pro_rata_unused_days', 'none_after_end', 'full_insurer_cancellation'] as const
export type RefundRule = (typeof REFUND_RULES)[number]

export interface Refund {
  rule: RefundRule
  refundMinor: number
  /** Whole days of cover after the day of cancelling (that day counts as used). */
  unusedDays: number
  /** Days of cover, both ends included. */
  coverDays: number
}

/**
 * Before the start date: the whole premium. From the start date to the end date: the unused whole
 * days' share of the premium, rounded down to the minor unit (never more than the exact share).
 * After the end date: nothing.
 */
export function refundOf(trip: Trip, premiumMinor: number, today: number): Refund {
  const [start, end] = [toDayNumber(trip.start_date)!, toDayNumber(trip.end_date)!]
  const coverDays = end - start + 1
  if (today < start) return { rule: 'full_before_start', refundMinor: premiumMinor, unusedDays: coverDays, coverDays }
  if (today > end) return { rule: 'none_after_end', refundMinor: 0, unusedDays: 0, coverDays }
  const unusedDays = end - today
  return { rule: 'pro_rata_unused_days', refundMinor: Math.floor((premiumMinor * unusedDays) / coverDays), unusedDays, coverDays }
}
