/** Run by allocator-options.test.ts as its own process: starts with the allocator's options, then says what it ran with. */
import { startWithAllocatorOptions } from '../../../src/runtime/bun/allocator-options'

startWithAllocatorOptions()
console.log(JSON.stringify({ pid: process.pid, purgeHoles: process.env.MIMALLOC_PURGE_HOLES ?? null, args: process.argv.slice(2), marker: process.env.MARKER }))
