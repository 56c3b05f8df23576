/**
 * @module The ids the sandbox makes for what it keeps (policies, their travellers, events): 20 hex
 * digits, the first 11 the millisecond it was made (until the year 2527), the other 9 random. Made
 * in time order, each new one lands on the last leaf of its UNIQUE index, as a row id does, where a
 * wholly random one lands on any leaf: the three such indexes a policy issue writes made over half
 * of the pages a checkpoint copies back into the file and flushes (bench/findings.md, 2026-11-28).
 * Two ids alike need the same millisecond and the same 36 random bits: at a steady 1,000 a second,
 * about once in four years.
 */
import { randomBytes } from 'node:crypto'

export function newId(nowMs = Date.now()): string {
  return nowMs.toString(16).padStart(11, '0') + randomBytes(5).toString('hex').slice(1)
}
