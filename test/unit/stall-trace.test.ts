/**
 * @module The stall trace the benchmark attributes latency with (src/stall-trace.ts): a blocked
 * event loop is written as a stall, and timed work as a span beside it; nothing is written once stopped.
 */
import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startStallTrace, timed, type TraceLine } from '../../src/stall-trace'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Holds the thread, as a long synchronous write would. */
function busy(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // spinning
  }
}

test('a blocked loop is a stall, and the timed work that blocked it a span overlapping it', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'stall-trace-')), 'trace.jsonl')
  const stop = startStallTrace(file)
  await sleep(20)
  const before = Date.now()
  timed('housekeeping', () => busy(30))
  await sleep(20)
  stop()
  const lines = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceLine)
  const span = lines.find((line) => 'span' in line && line.span === 'housekeeping') as { at: number; ms: number }
  expect(span.ms).toBeGreaterThanOrEqual(29)
  expect(span.at).toBeGreaterThanOrEqual(before - 1)
  // A stall began no later than the span and ended no earlier than it (a loaded machine may add others).
  const stalls = lines.filter((line): line is { stall: number; at: number } => 'stall' in line)
  expect(stalls.some((stall) => stall.stall >= 25 && stall.at <= span.at + 1 && stall.at + stall.stall >= span.at + span.ms - 1)).toBe(true)
  timed('after the stop', () => busy(5))
  await sleep(10)
  expect(readFileSync(file, 'utf8')).not.toContain('after the stop')
})
