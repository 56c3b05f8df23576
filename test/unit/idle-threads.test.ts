/**
 * @module Threads that run only while the request thread does not (src/runtime/bun/idle-threads.ts):
 * on Linux, the SCHED_IDLE policy, which the kernel shows as policy 5 in the thread's stat.
 */
import { expect, test } from 'bun:test'
import { runOnlyWhenIdle, threadsNamed } from '../../src/runtime/bun/idle-threads'
import { policyOf } from './support/thread-policy'

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
