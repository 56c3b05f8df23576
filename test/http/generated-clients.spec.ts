/**
 * @module Generators that write a function per operation, named by its operationId, proven against
 * a real server: hey-api (@hey-api/openapi-ts, its fetch client) generates an SDK from the served
 * document, strict tsc passes on it and on a partner's program (test/openapi/hey-api/flow.ts), and
 * the program runs session, search, issue, an advance of the session's clock and cancel with no
 * base URL of its own: the document's `servers` is all that points the SDK at the server. openapi-typescript, Portman and Prism are in
 * openapi-tools.spec.ts. Bun target only: the document is the same on every target.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from './support/client'
import { ROOT } from './support/server'

const TMP = join(ROOT, '.tmp', 'generated-clients')
const SPEC = '/api/sandbox/openapi.json'
const TOOLS = join(ROOT, 'test', 'tools')
/** Every operationId of the document, as the function a generator should name after it. */
const OPERATIONS = [
  'createSession',
  'searchPlans',
  'issuePolicy',
  'modifyPolicy',
  'readPolicy',
  'downloadPolicyCertificate',
  'cancelPolicy',
  'registerWebhook',
  'sendTestEvent',
  'listEvents',
  'resendEvent',
  'readClock',
  'advanceClock',
  'reissuePolicyCertificate',
  'insurerCancelPolicy',
  'listPolicies',
  'listRequests',
  'readRequest',
  'openConsole',
]

test.beforeEach(({}, info) => test.skip(info.project.name !== 'bun', 'the document is the same on every target; these tools run once'))

/** Runs a command to completion; its output is in the failure message when it fails. */
function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, encoding: 'utf8', timeout: 90_000 })
  expect(result.status, `${command} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(0)
  return result
}

test("hey-api: the SDK has a function per operationId, strict tsc (TypeScript 5 and 7) passes, and the flow runs on the document's servers alone", async ({
  privateServer,
}) => {
  // About 20 s alone on a 2-core machine, most of it TypeScript 5's tsc.
  test.setTimeout(120_000)
  const server = await privateServer('hey-api')
  const program = join(ROOT, 'test', 'openapi', 'hey-api')
  mkdirSync(TMP, { recursive: true })
  const dir = mkdtempSync(join(TMP, 'hey-api-'))
  try {
    for (const file of ['flow.ts', 'tsconfig.json']) copyFileSync(join(program, file), join(dir, file))
    // From test/tools, beside TypeScript 5: hey-api writes its code through TypeScript's compiler
    // API, which TypeScript 7 (the project's) no longer has. 0.95 is its last version for Node 20.
    run(
      join(TOOLS, 'node_modules', '.bin', 'openapi-ts'),
      ['-i', `${server.url}${SPEC}`, '-o', join(dir, 'sdk'), '-p', '@hey-api/typescript', '@hey-api/sdk', '@hey-api/client-fetch'],
      { cwd: dir },
    ) // hey-api writes a log file into the working folder when it fails

    const sdk = readFileSync(join(dir, 'sdk', 'sdk.gen.ts'), 'utf8')
    expect([...sdk.matchAll(/^export const (\w+) = /gm)].map((match) => match[1]).sort()).toEqual([...OPERATIONS].sort())
    // Named schemas become named types, and the base URL is the server the document came from.
    const types = readFileSync(join(dir, 'sdk', 'types.gen.ts'), 'utf8')
    for (const name of ['Plan', 'Policy', 'IssuedPolicy', 'Trip', 'Cancellation', 'ErrorEnvelope', 'Clock', 'Advance', 'AdvanceRequest'])
      expect(types).toMatch(new RegExp(`^export type ${name} = \\{`, 'm'))
    expect(readFileSync(join(dir, 'sdk', 'client.gen.ts'), 'utf8')).toContain(`baseUrl: '${server.url}'`)

    // The SDK's peer range starts at TypeScript 5.5; the project is on 7. Both must accept it.
    run(join(TOOLS, 'node_modules', '.bin', 'tsc'), ['-p', dir])
    run(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', dir])
    const flow = run('bun', [join(dir, 'flow.ts')], { cwd: dir }).stdout
    expect(JSON.parse(flow.trim())).toMatchObject({
      baseUrl: server.url,
      session: expect.stringMatching(/^sbx_[0-9a-f]+$/),
      policy_ref: expect.stringMatching(/^pol_sbx_/),
      status: 'cancelled',
      refund: 'pro_rata_unused_days',
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
