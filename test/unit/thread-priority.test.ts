/**
 * @module The checkpoint worker's priority (src/runtime/bun/thread-priority.ts): on Linux, nice 19
 * with short slices, so that it still runs under load but gives the core back quickly.
 */
import { expect, test } from 'bun:test'
import { release } from 'node:os'
import { yieldQuickly } from '../../src/runtime/bun/thread-priority'
import { niceOf, policyOf, sliceOf, threadsNamed } from './support/thread-policy'

/** Linux 6.12 and later take a thread's own slice (EEVDF's custom slices). */
const [major, minor] = release().split('.').map(Number)
const customSlices = major! > 6 || (major === 6 && minor! >= 12)

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
