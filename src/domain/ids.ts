/**
 * @module The ids the sandbox makes for what it keeps (policies, their travellers, events): 20 hex
 * digits, the first 11 the millisecond it was made (until the year 2527), the other 9 random. Made
 * in time order, each new one lands on the last leaf of its UNIQUE index, as a row id does, where a
 * wholly random one lands on any leaf: the three such indexes a policy issue writes made over half
 * of the pages a checkpoint copies back into the file and flushes (bench/findings.md, 2026-11-28).
 * A process never makes one twice: it remembers those of the current millisecond (an issue makes
 * its two events' ids in the same one). Two processes on one database (PostgreSQL) clash only with
 * the same millisecond and the same 36 random bits: about once in two years of both making 1,000 a
 * second.
 */
import { randomBytes } from 'node:crypto'

let madeAt = -1
const madeThisMs = new Set<string>()

export function newId(nowMs = Date.now()): string {
  if (nowMs !== madeAt) {
    madeAt = nowMs
    madeThisMs.clear()
  }
  const time = nowMs.toString(16).padStart(11, '0')
  let id: string
  do id = time + randomBytes(5).toString('hex').slice(1)
  while (madeThisMs.has(id))
  madeThisMs.add(id)
  return id
}
