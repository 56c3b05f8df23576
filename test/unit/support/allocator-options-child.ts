/**
 * Run by allocator-options.test.ts as its own process: starts with the allocator's options, then says
 * what it ran with. `OVERSIZE=1`: with an environment the second start cannot take.
 */
import { startWithAllocatorOptions } from '../../../src/runtime/bun/allocator-options'

// An environment over the kernel's limit for one string (32 pages: 128 KiB to 2 MiB by page size)
// makes the second start fail (E2BIG).
if (process.env.OVERSIZE === '1') process.env.OVERSIZED = 'x'.repeat(4 * 1024 * 1024)
startWithAllocatorOptions()
const { MIMALLOC_PURGE_HOLES, MARKER, EMPTY } = process.env
console.log(JSON.stringify({ pid: process.pid, purgeHoles: MIMALLOC_PURGE_HOLES ?? null, args: process.argv.slice(2), marker: MARKER, empty: EMPTY }))
