/**
 * @module Bun entry: `bun src/runtime/bun/server.ts` (`npm start`), and the compiled binary. It first
 * makes sure a hosted server on Linux runs with the allocator's options (allocator-options.ts), which
 * may execute the process again; only then does it load the sandbox (start-sandbox.ts), so that a
 * start done twice loads the sandbox once.
 */
import { withFlags } from '../../config'
import { startWithAllocatorOptions, wantsAllocatorOptions } from './allocator-options'

if (wantsAllocatorOptions(withFlags(process.env, process.argv.slice(2)))) startWithAllocatorOptions()
void import('./start-sandbox')
