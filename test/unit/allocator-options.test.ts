/**
 * @module The allocator's options (src/runtime/bun/allocator-options.ts): on Linux a hosted server
 * started without them executes itself again with them, keeping its process id, arguments and
 * environment.
 */
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ALLOCATOR_OPTIONS, missingOptions, wantsAllocatorOptions } from '../../src/runtime/bun/allocator-options'
import { withFlags } from '../../src/config'

const CHILD = join(import.meta.dir, 'support/allocator-options-child.ts')

/** A start that went well: what the child ran with, and nothing on its stderr. */
async function startedWith(env: Record<string, string>, args: string[]) {
  const { spawned, output, errors } = await runChild(env, args)
  expect(errors).toBe('')
  return { spawned, ...output }
}

/** Runs `startWithAllocatorOptions` in a new Bun process, which then prints what it ran with. */
async function runChild(env: Record<string, string>, args: string[]) {
  const { MIMALLOC_PURGE_HOLES: _, ...inherited } = process.env
  const child = Bun.spawn([process.execPath, CHILD, ...args], { env: { ...inherited, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const [output, errors] = [await new Response(child.stdout).text(), await new Response(child.stderr).text()]
  expect(await child.exited).toBe(0)
  const said = JSON.parse(output) as { pid: number; purgeHoles: string | null; args: string[]; marker: string; empty: string }
  return { spawned: child.pid, output: said, errors }
}

describe('allocator options', () => {
  test('a hosted server on Linux wants them; the local profile, by flag or variable, and other systems do not', () => {
    expect(wantsAllocatorOptions(withFlags({}, []), 'linux')).toBe(true)
    expect(wantsAllocatorOptions(withFlags({ SANDBOX_PROFILE: 'hosted' }, []), 'linux')).toBe(true)
    expect(wantsAllocatorOptions(withFlags({}, ['--local']), 'linux')).toBe(false)
    expect(wantsAllocatorOptions(withFlags({ SANDBOX_PROFILE: 'local' }, []), 'linux')).toBe(false)
    expect(wantsAllocatorOptions(withFlags({}, []), 'darwin')).toBe(false)
  })

  test('names what the starting environment lacks, and nothing the operator set', () => {
    expect(missingOptions(['PATH'])).toEqual({ ...ALLOCATOR_OPTIONS })
    expect(missingOptions(['PATH', 'MIMALLOC_PURGE_HOLES'])).toEqual({})
  })

  test.skipIf(process.platform !== 'linux')('a process started without them runs again with them: same pid, arguments and environment', async () => {
    const args = ['two words', '', 'é', '']
    const started = await startedWith({ MARKER: 'kept', EMPTY: '' }, args)
    expect(started.purgeHoles).toBe('0')
    expect(started.pid).toBe(started.spawned)
    expect(started.args).toEqual(args)
    expect(started.marker).toBe('kept')
    expect(started.empty).toBe('')
  })

  test.skipIf(process.platform !== 'linux')("the operator's own value is left as it is", async () => {
    const started = await startedWith({ MIMALLOC_PURGE_HOLES: '1' }, [])
    expect(started.purgeHoles).toBe('1')
  })

  test.skipIf(process.platform !== 'linux')('where the second start fails, one warning line, and the server goes on without them', async () => {
    const { spawned, output, errors } = await runChild({ OVERSIZE: '1', MARKER: 'kept' }, ['arg'])
    expect(output.pid).toBe(spawned)
    expect(output.purgeHoles).toBeNull()
    expect(output.args).toEqual(['arg'])
    expect(output.marker).toBe('kept')
    // Bun adds its own ExperimentalWarning for process.execve when the call returns.
    const warnings = errors.split('\n').filter((line) => line.startsWith('{'))
    expect(warnings).toHaveLength(1)
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 'warn', msg: 'started without the allocator options', reason: expect.stringContaining('E2BIG') })
  })
})
