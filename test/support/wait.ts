/** @module Waiting helpers: time spans that grow on a slow machine; a free port and a pause (launch.ts's, here too). */
export { freePort, sleep } from './launch'

/**
 * The machine was too slow for a scenario's own timing (a step that had to finish inside a session's
 * lifetime or a rate window did not): not a failure of the server, so `withTimeSpans` runs the
 * scenario again with more time.
 */
export class TooSlow extends Error {}

/**
 * Runs `step`, which the scenario needs finished before `deadline` (ms since the epoch, as the
 * server reported it). A failure once the deadline has passed is the machine's slowness: TooSlow.
 */
export async function before<T>(deadline: number, step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    if (error instanceof TooSlow || Date.now() < deadline) throw error
    throw new TooSlow(`the step ended ${Date.now() - deadline} ms past its deadline: ${String(error).split('\n')[0]}`)
  }
}

/**
 * Runs a scenario that needs real time to pass on a real server (a session ending, a window
 * rolling) with the first time span, and again with each longer one while the machine proves too
 * slow for it (TooSlow): short on a quiet machine, never a guess on a loaded one. A real failure
 * fails at once.
 */
export async function withTimeSpans<T>(spans: number[], scenario: (span: number) => Promise<T>): Promise<T> {
  for (const [index, span] of spans.entries()) {
    try {
      return await scenario(span)
    } catch (error) {
      if (!(error instanceof TooSlow) || index === spans.length - 1) throw error
      console.log(`too slow with a time span of ${span}: ${error.message}; again with ${spans[index + 1]}`)
    }
  }
  throw new Error('withTimeSpans needs at least one span')
}
