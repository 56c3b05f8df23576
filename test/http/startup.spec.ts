/**
 * Start-up with bad configuration (issue #12), on every entry: one line naming the variable and the
 * problem, a non-zero exit, no stack trace and no hang.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from './support/client'
import { ROOT, currentTarget, freshDatabasePath } from './support/server'
import { serverCommand } from './support/targets'

/** Runs the target with this environment until it exits (or 10 s pass); its exit code and stderr. */
function startFailing(env: Record<string, string>): Promise<{ code: number | null; stderr: string; hung: boolean }> {
  const [command, ...args] = serverCommand(currentTarget())
  const child = spawn(command!, args, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', SANDBOX_DB_PATH: ':memory:', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, stderr, hung: signal === 'SIGKILL' })
    })
  })
}

test.describe('bad configuration stops start-up with one line', () => {
  test.skip(() => currentTarget() === 'uat', 'the uat target is the Bun entry once more')

  const scratch = () => {
    const folder = freshDatabasePath(`startup-${currentTarget()}`).replace(/\.db$/, '')
    mkdirSync(folder, { recursive: true })
    return folder
  }
  const cases: [string, () => Record<string, string>, string][] = [
    ['HOST that is no address', () => ({ HOST: '999.1.1.1' }), 'HOST'],
    ['HOST not on this machine', () => ({ HOST: '192.0.2.1' }), 'HOST'],
    ['SANDBOX_DB_PATH whose folder cannot be created', () => ({ SANDBOX_DB_PATH: '/proc/x/y.db' }), 'SANDBOX_DB_PATH'],
    ['SANDBOX_DB_PATH naming a directory', () => ({ SANDBOX_DB_PATH: scratch() }), 'SANDBOX_DB_PATH'],
    [
      'SANDBOX_DB_PATH naming a file that is not a database',
      () => {
        const path = join(scratch(), 'not-a-database.db')
        writeFileSync(path, 'not a database '.repeat(100))
        return { SANDBOX_DB_PATH: path }
      },
      'SANDBOX_DB_PATH',
    ],
    [
      'SANDBOX_DATABASE_URL that is not a PostgreSQL URL',
      () => ({ SANDBOX_DATABASE_URL: 'mysql://sandbox:secret-pw@127.0.0.1/sandbox' }),
      'SANDBOX_DATABASE_URL',
    ],
    [
      'SANDBOX_DATABASE_URL of a server that does not answer',
      () => ({ SANDBOX_DATABASE_URL: 'postgres://sandbox:secret-pw@127.0.0.1:9/sandbox' }),
      'SANDBOX_DATABASE_URL',
    ],
  ]
  for (const [name, env, variable] of cases) {
    test(name, async () => {
      const { code, stderr, hung } = await startFailing(env())
      expect(hung, `exited within 10 s; stderr: ${stderr}`).toBe(false)
      expect(code).not.toBe(0)
      const lines = stderr.trim().split('\n')
      expect(lines, stderr).toHaveLength(1)
      expect(lines[0]).toMatch(/^travel-sandbox: /)
      expect(lines[0]).toContain(variable)
      expect(stderr).not.toMatch(/\n\s+at |\.ts:\d+|\.js:\d+/)
      expect(stderr, 'a password in the URL is never repeated').not.toContain('secret-pw')
    })
  }
})

test.describe('an embedded file serves one process', () => {
  test.skip(() => ['uat', 'pg'].includes(currentTarget()), 'the uat target is the Bun entry once more; pg shares a PostgreSQL database')

  test('a second process on the file stops at start-up with one line naming it and PostgreSQL; once the first is gone, even killed, the file serves again', async ({
    privateServer,
  }) => {
    const first = await privateServer('one-process')
    const { code, stderr, hung } = await startFailing({ SANDBOX_DB_PATH: first.dbPath })
    expect(hung, `exited within 10 s; stderr: ${stderr}`).toBe(false)
    expect(code).not.toBe(0)
    expect(stderr.trim().split('\n'), stderr).toEqual([
      `travel-sandbox: cannot start: SANDBOX_DB_PATH: ${first.dbPath} is in use by another process; an embedded file serves one process (several share a PostgreSQL database: SANDBOX_DATABASE_URL)`,
    ])
    expect((await fetch(`${first.url}/readyz`)).status, 'the first process still serves').toBe(200)

    await first.stop('SIGKILL')
    const next = await privateServer('one-process', {}, { dbPath: first.dbPath })
    expect((await fetch(`${next.url}/readyz`)).status).toBe(200)
  })
})
