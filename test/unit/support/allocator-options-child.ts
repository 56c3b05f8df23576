/** Run by allocator-options.test.ts as its own process: starts with the allocator's options, then says what it ran with. */
import { startWithAllocatorOptions } from '../../../src/runtime/bun/allocator-options'

startWithAllocatorOptions()
const { MIMALLOC_PURGE_HOLES, MARKER, EMPTY } = process.env
console.log(JSON.stringify({ pid: process.pid, purgeHoles: MIMALLOC_PURGE_HOLES ?? null, args: process.argv.slice(2), marker: MARKER, empty: EMPTY }))
