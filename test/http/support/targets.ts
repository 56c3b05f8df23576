/**
 * The four ways partners run the sandbox, and the Bun source once more with the UAT gateway on
 * (`uat`, against the stand-in insurer). The same HTTP suite runs against each: one Playwright
 * project per target (`SANDBOX_TARGETS=bun,deno` narrows the run).
 */
import { join } from 'node:path'

export const ALL_TARGETS = ['bun', 'binary', 'deno', 'node', 'uat'] as const
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
    case 'uat':
      return { command: 'bun', args: ['src/server.bun.ts'] }
    case 'binary':
      return { command: join(root, 'dist/travel-sandbox'), args: [] }
    case 'deno':
      return { command: 'deno', args: ['run', '--allow-net', '--allow-env', '--allow-read', '--allow-write', 'dist/travel-sandbox.deno.js'] }
    case 'node':
      return { command: 'node', args: ['dist/travel-sandbox.node.js'] }
  }
}

/** Port of the stand-in insurer the `uat` target's servers use (started by playwright.config.ts). */
export const standInPort = (httpPort: number) => httpPort + 50

/** Environment a target's servers need beyond the test's own. */
export function targetEnv(target: Target, httpPort: number): Record<string, string> {
  return target === 'uat' ? { SANDBOX_UAT_URL: `http://127.0.0.1:${standInPort(httpPort)}` } : {}
}

/** The `mode` a target answers with when nothing fails. */
export const expectedMode = (target: Target) => (target === 'uat' ? 'uat_gateway' : 'simulation')
