/**
 * @module Bun entry: `bun src/runtime/bun/server.ts` (`npm start`), and the compiled binary. On Linux it
 * first makes sure a hosted server runs with the allocator's options (allocator-options.ts), which may
 * execute the process again; only then does it load the sandbox (start-sandbox.ts), so that a start
 * done twice loads the sandbox once.
 */
import { withFlags } from '../../config'
import { startWithAllocatorOptions } from './allocator-options'

// On a partner's own machine or CI (`--local`), start-up time and memory matter more than the tail
// under load: the second start costs the binary about 17 ms, and the options up to 45 MB.
if (withFlags(process.env, process.argv.slice(2)).SANDBOX_PROFILE !== 'local') startWithAllocatorOptions()
void import('./start-sandbox')
