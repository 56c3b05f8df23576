/**
 * @module The stall trace the benchmark attributes latency with (src/stall-trace.ts): a blocked
 * event loop is written as a stall, and timed work as a span beside it; nothing is written once stopped.
 * On Linux a stall says whether the loop's thread ran through it or was off the core.
 */
import { expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startStallTrace, timed, type TraceLine } from '../../src/stall-trace'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

type Stall = Extract<TraceLine, { stall: number }>

/** The stalls a trace file holds. */
function stallsIn(file: string): Stall[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceLine)
    .filter((line): line is Stall => 'stall' in line)
}

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

test.skipIf(process.platform !== 'linux')(
  'a stall says how long the thread ran or waited for the core, and so tells a busy loop from a blocked one',
  async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'stall-trace-')), 'trace.jsonl')
    const stop = startStallTrace(file)
    await sleep(20)
    busy(40)
    await sleep(20)
    // Blocked in the kernel (a futex wait), as a thread waiting on the disk or a lock is.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 40)
    await sleep(20)
    stop()
    const [spun, blocked] = stallsIn(file).filter((stall) => stall.stall >= 30)
    // Spinning, the thread was on the core or, on a loaded machine, waiting for it: never off it.
    expect(spun!.ran! + spun!.waited!).toBeGreaterThanOrEqual(35)
    expect(blocked!.ran! + blocked!.waited!).toBeLessThan(20)
    expect(blocked!.at).toBeGreaterThan(spun!.at)
  },
)
