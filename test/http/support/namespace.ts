/**
 * @module Running a command in a network namespace of its own, standing in for the internet: only
 * its loopback, with 11.0.0.1 (a public-looking address) on it, and an /etc/resolv.conf of its own
 * that names a DNS server on 127.0.0.1 (dns-server.ts). Nothing it sends can leave the namespace.
 * Needs `unshare` and the right to make network and mount namespaces (root, or a system that
 * allows user namespaces); `namespaceProblem` says why not where they are not allowed.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../../support/launch'

// Resolvers wait up to 10 s for an answer (the system's default is 5 s, twice), so that a name that
// answers late (dns-server.ts) is answered, not given up on, by the system's resolver. A namespace
// of processes too: when its first process ends, every process started in it ends.
const RESOLV_CONF = 'nameserver 127.0.0.1\noptions timeout:10 attempts:1\n'
const SETUP = 'ip link set lo up && ip addr add 11.0.0.1/32 dev lo && mount --bind "$RESOLV" /etc/resolv.conf && exec "$@"'
const NAMESPACES = ['--net', '--mount', '--pid', '--fork', '--kill-child', '--mount-proc']
/** As root; else as root of a user namespace of its own, where the system allows those. */
const WAYS = [NAMESPACES, ['--map-root-user', ...NAMESPACES]]
const command = (way: string[], rest: string[]) => [...way, '--', 'sh', '-c', SETUP, 'namespace', ...rest]

let chosen: string[] | null | undefined
/** Why a namespace cannot be made here (one line), or null. */
export function namespaceProblem(): string | null {
  let problem = ''
  chosen ??=
    WAYS.find((way) => {
      const probe = spawnSync('unshare', command(way, ['true']), { env: { ...process.env, RESOLV: resolvConf() }, encoding: 'utf8' })
      problem = probe.error
        ? `unshare cannot run here (${probe.error.message})`
        : `network namespaces are not allowed here (unshare: ${probe.stderr.trim().split('\n')[0]})`
      return !probe.error && probe.status === 0
    }) ?? null
  return chosen ? null : problem
}

let conf: string | undefined
function resolvConf(): string {
  if (!conf) {
    conf = join(mkdtempSync(join(tmpdir(), 'sandbox-ns-')), 'resolv.conf')
    writeFileSync(conf, RESOLV_CONF)
  }
  return conf
}

/** Runs `program` (from the repository root) in a namespace of its own; answers what it printed. */
export function inNamespace(program: string[], env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  if (namespaceProblem()) throw new Error(namespaceProblem()!)
  const child = spawn('unshare', command(chosen!, program), {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}`, RESOLV: resolvConf(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    }),
  )
}
