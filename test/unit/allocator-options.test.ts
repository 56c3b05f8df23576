/**
 * @module The allocator's options (src/runtime/bun/allocator-options.ts): on Linux a process started
 * without them executes itself again with them, keeping its process id, arguments and environment.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ALLOCATOR_OPTIONS, missingOptions } from '../../src/runtime/bun/allocator-options'

const CHILD = join(import.meta.dir, 'support/allocator-options-child.ts')

/** Runs `startWithAllocatorOptions` in a new Bun process, which then prints what it ran with. */
async function startedWith(env: Record<string, string>, args: string[]) {
  const { MIMALLOC_PURGE_HOLES: _, ...inherited } = process.env
  const child = Bun.spawn([process.execPath, CHILD, ...args], { env: { ...inherited, ...env }, stdout: 'pipe', stderr: 'inherit' })
  const output = await new Response(child.stdout).text()
  expect(await child.exited).toBe(0)
  return { spawned: child.pid, ...(JSON.parse(output) as { pid: number; purgeHoles: string | null; args: string[]; marker: string }) }
}

describe('allocator options', () => {
  test('names what the environment lacks, and nothing the operator set', () => {
    expect(missingOptions({})).toEqual(Object.entries(ALLOCATOR_OPTIONS).map(([name, value]) => `${name}=${value}`))
    expect(missingOptions({ MIMALLOC_PURGE_HOLES: '1' })).toEqual([])
  })

  test.skipIf(process.platform !== 'linux')('a process started without them runs again with them: same pid, arguments and environment', async () => {
    const args = ['--local', 'two words', '', 'é']
    const started = await startedWith({ MARKER: 'kept' }, args)
    expect(started.purgeHoles).toBe('0')
    expect(started.pid).toBe(started.spawned)
    expect(started.args).toEqual(args)
    expect(started.marker).toBe('kept')
  })

  test.skipIf(process.platform !== 'linux')("the operator's own value is left as it is", async () => {
    const started = await startedWith({ MIMALLOC_PURGE_HOLES: '1' }, [])
    expect(started.purgeHoles).toBe('1')
  })
})
