/**
 * The four ways partners run the sandbox, the Bun source once more with the UAT gateway on
 * (`uat`, against the stand-in insurer), and the Bun source on PostgreSQL as two instances behind a
 * load balancer (`pg`, see postgres.ts). The same HTTP suite runs against each: one Playwright
 * project per target (`SANDBOX_TARGETS=bun,deno` narrows the run).
 */
import { runtimeCommand, type Runtime } from '../../support/launch'
import { databaseUrl, sharedDatabase } from './postgres'

export const ALL_TARGETS = ['bun', 'binary', 'deno', 'node', 'uat', 'pg'] as const
export type Target = (typeof ALL_TARGETS)[number]

export function selectedTargets(): Target[] {
  const wanted = (process.env.SANDBOX_TARGETS ?? ALL_TARGETS.join(',')).split(',').map((name) => name.trim())
  const unknown = wanted.filter((name) => !ALL_TARGETS.includes(name as Target))
  if (unknown.length > 0) throw new Error(`SANDBOX_TARGETS: unknown target ${unknown.join(', ')}`)
  return wanted as Target[]
}

/** The runtime a target runs on: `uat` and `pg` are the Bun source with another configuration. */
export const runtimeOf = (target: Target): Runtime => (target === 'uat' || target === 'pg' ? 'bun' : target)

/** The command line that starts a target's server, run from the repository root (test/support/launch.ts). */
export const serverCommand = (target: Target) => runtimeCommand(runtimeOf(target))

/** Port of the stand-in insurer the `uat` target's servers use (started by playwright.config.ts). */
export const standInPort = (httpPort: number) => httpPort + 50

/** Ports of the `pg` project's two instances (its baseURL is the load balancer in front of them). */
export const instancePorts = (httpPort: number) => [httpPort + 61, httpPort + 62] as const

/**
 * Environment a target's servers need beyond the test's own. For `pg` this is the project's shared
 * database; a server a test starts gets its own instead (server.ts).
 */
export function targetEnv(target: Target, httpPort: number): Record<string, string> {
  if (target === 'uat') return { SANDBOX_UAT_URL: `http://127.0.0.1:${standInPort(httpPort)}` }
  if (target === 'pg') return { SANDBOX_DATABASE_URL: databaseUrl(httpPort, sharedDatabase(httpPort)) }
  return {}
}

/** The `mode` a target answers with when nothing fails. */
export const expectedMode = (target: Target) => (target === 'uat' ? 'uat_gateway' : 'simulation')
