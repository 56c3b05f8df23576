/**
 * @module `Sandbox-Delay-Ms`: a testing aid for client time-outs. The answer of an admitted call
 * waits that long before it is sent. The call's work is done, and committed, first: a client that
 * gives up meanwhile has still had its call applied, as when an answer is lost on a slow network,
 * and a retry with the same `Idempotency-Key` gets the first answer. The wait holds no lock,
 * transaction or database connection, and ends as soon as the client leaves.
 */
import { setTimeout as wait } from 'node:timers/promises'
import { throwIfInvalid } from '../errors'

export const DELAY_HEADER = 'sandbox-delay-ms'
export const MAX_DELAY_MS = 10_000
/**
 * The header's form: 1 to 5 digits worth at most MAX_DELAY_MS (`00500` is 500; `000000`, six
 * digits, is refused). The OpenAPI document states this very pattern (headers-model.ts).
 */
export const DELAY_SHAPE = /^(?:[0-9]{1,4}|0[0-9]{4}|10000)$/

/** The delay the header asks for (0 without it), or `validation_failed`; the value is never repeated. */
export function requestedDelay(header: string | null): number {
  if (header === null) return 0
  if (!DELAY_SHAPE.test(header)) {
    throwIfInvalid([{ field: 'Sandbox-Delay-Ms', issue: `must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}` }])
  }
  return Number(header)
}

/** Resolves after `ms`, or at once when the client has left (`signal` aborted). */
export async function delayAnswer(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return
  await wait(ms, undefined, { signal }).catch(() => undefined)
}
