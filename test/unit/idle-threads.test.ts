/**
 * @module Threads kept from holding the request thread's core (src/runtime/bun/idle-threads.ts): on
 * Linux, the SCHED_IDLE policy (policy 5 in the thread's stat) for the allocator's scavenger, nice 19
 * with short slices for a thread that must still run under load.
 */
import { expect, test } from 'bun:test'
import { release } from 'node:os'
import { runOnlyWhenIdle, threadsNamed, yieldQuickly } from '../../src/runtime/bun/idle-threads'
import { niceOf, policyOf, sliceOf } from './support/thread-policy'

/** Linux 6.12 and later take a thread's own slice (EEVDF's custom slices). */
const [major, minor] = release().split('.').map(Number)
const customSlices = major! > 6 || (major === 6 && minor! >= 12)

test.skipIf(process.platform !== 'linux')(
  "the allocator's scavenger, as the Bun entry finds it, takes the idle policy; the calling thread keeps its own",
  () => {
    const scavengers = threadsNamed('mi-scavenger')
    expect(scavengers).toHaveLength(1)
    expect(policyOf(scavengers[0]!)).toBe(0)
    expect(runOnlyWhenIdle(scavengers[0]!)).toBe('idle')
    expect(policyOf(scavengers[0]!)).toBe(5)
    expect(policyOf(process.pid)).toBe(0)
  },
)

test.skipIf(process.platform !== 'linux')('a thread that must still run under load, as the checkpoint worker, gets nice 19 and short slices', async () => {
  const before = new Set(threadsNamed('Worker'))
  const worker = new Worker(URL.createObjectURL(new Blob(['setInterval(() => {}, 1000)'], { type: 'application/javascript' })))
  try {
    let tid: number | undefined
    while (tid === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      tid = threadsNamed('Worker').find((candidate) => !before.has(candidate))
    }
    expect(yieldQuickly(tid)).toBe('nice 19, short slices')
    expect(niceOf(tid)).toBe(19)
    expect(policyOf(tid)).toBe(0)
    if (customSlices && sliceOf(tid) !== null) expect(sliceOf(tid)).toBe(100_000)
  } finally {
    worker.terminate()
  }
})
