/**
 * The four ways partners run the sandbox. The same HTTP suite runs against each: one Playwright
 * project per target (`SANDBOX_TARGETS=bun,deno` narrows the run).
 */
import { join } from 'node:path'

export const ALL_TARGETS = ['bun', 'binary', 'deno', 'node'] as const
export type Target = (typeof ALL_TARGETS)[number]

export function selectedTargets(): Target[] {
  const wanted = (process.env.SANDBOX_TARGETS ?? ALL_TARGETS.join(',')).split(',').map((name) => name.trim())
  const unknown = wanted.filter((name) => !ALL_TARGETS.includes(name as Target))
  if (unknown.length > 0) throw new Error(`SANDBOX_TARGETS: unknown target ${unknown.join(', ')}`)
  return wanted as Target[]
}

/** The command that starts a target's server, run from the repository root. */
export function serverCommand(target: Target, root: string): { command: string; args: string[] } {
  switch (target) {
    case 'bun':
      return { command: 'bun', args: ['src/server.bun.ts'] }
    case 'binary':
      return { command: join(root, 'dist/travel-sandbox'), args: [] }
    case 'deno':
      return { command: 'deno', args: ['run', '--allow-net', '--allow-env', '--allow-read', '--allow-write', 'dist/travel-sandbox.deno.js'] }
    case 'node':
      return { command: 'node', args: ['dist/travel-sandbox.node.js'] }
  }
}
