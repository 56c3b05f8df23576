/**
 * @module Every shell command the docs show, run as written. Each fenced shell block (sh, bash, shell,
 * console) of README.md, docs/*.md (not docs/spec/, the public specification's copies) and
 * src/client/README.md is claimed below: its commands by a test of this file, the whole block by
 * another spec's test that reads it itself, or a command by an exclusion that says why. A block or a
 * command that nobody claims fails the suite, so a command added to the docs needs its test. A block
 * runs in bash from the clone, in a process group of its own that the test kills at its end
 * (background servers included), with only the substitutions each test makes by name: the ports
 * the docs name or rely on (3000, and 4400 for the stand-in insurer) moved to the test's own, the
 * data file a command names or relies on (/tmp/sandbox.db, data/sandbox.db) moved to a scratch
 * file, and `npm install && ` dropped. Bun target only: a command is the same whatever the project.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { SETTINGS } from '../../src/config'
import { API, call, expect, expectError, expectOk, searchBody, sleep, test as base } from './support/client'
import { ROOT, removeDatabase, scratchDatabase, testPort } from './support/server'

const SHELL_LANGUAGES = ['sh', 'bash', 'shell', 'console']

interface Blocks {
  /** Runs a script in bash from the clone, in a process group of its own (see startShell). */
  run(script: string, env?: Record<string, string>): Shell
  /** A scratch database file for a server the test's blocks start. */
  database(name: string): string
}

/**
 * The suite's test, with the blocks a test starts killed when it ends (passed, failed or timed
 * out), and then their scratch databases removed.
 */
const test = base.extend<{ blocks: Blocks }>({
  blocks: async ({}, use) => {
    const started: Shell[] = []
    const databases: string[] = []
    await use({
      run: (script, env = {}) => {
        const shell = startShell(script, env)
        started.push(shell)
        return shell
      },
      database: (name) => {
        databases.push(scratchDatabase(name))
        return databases.at(-1)!
      },
    })
    await Promise.all(started.map((shell) => shell.kill()))
    for (const path of databases) removeDatabase(path)
  },
})

test.beforeEach(({}, info) => test.skip(info.project.name !== 'bun', 'the documented commands are the same whatever the target; they run once'))

// ---------------------------------------------------------------------------------------------
// The blocks the docs hold, and who runs each

interface Block {
  file: string
  /** The heading the block sits under, as written (`## Quick start`). */
  heading: string
  lang: string
  line: number
  text: string
}

/** README.md, every docs/*.md (docs/spec/ holds the public specification's copies) and the client's README. */
function documentedFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
  return ['README.md', ...docs, 'src/client/README.md']
}

/** Every fenced shell block of the documented files, with the heading above it. */
function shellBlocks(): Block[] {
  const blocks: Block[] = []
  for (const file of documentedFiles()) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n')
    let heading = '(before any heading)'
    for (let index = 0; index < lines.length; index++) {
      const fence = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[index]!)
      if (!fence) {
        if (/^#{1,6} /.test(lines[index]!)) heading = lines[index]!.trim()
        continue
      }
      const [, indent, marker, lang] = fence
      const closing = new RegExp(`^\\s*${marker![0]}{${marker!.length},}\\s*$`)
      const start = index + 1
      const body: string[] = []
      for (index++; index < lines.length && !closing.test(lines[index]!); index++) body.push(lines[index]!.slice(indent!.length))
      if (SHELL_LANGUAGES.includes(lang!.toLowerCase())) blocks.push({ file, heading, lang: lang!, line: start, text: `${body.join('\n')}\n` })
    }
  }
  return blocks
}

/** A block's commands: continued lines joined, comments and blank lines dropped, spaces collapsed. */
function commandsOf(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) =>
      line
        .replace(/(^|\s)#.*$/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean)
}

/** The titles of this file's tests that run a block. */
const RUN = {
  local: 'README Quick start: npm run start:local serves on loopback only, with the fair-use limit lifted',
  hosted: 'README Quick start: npm start serves on every interface, with the hosted fair-use limit',
  binary: 'README binary: the build, --help listing every setting, then the binary in the background',
  ci: 'README CI: the background sandbox is ready when the readiness loop ends, and has no fair-use limit',
  uatUrl: 'operations UAT gateway: SANDBOX_UAT_URL points the sandbox at that insurer (uat_gateway mode)',
  standIn: 'operations UAT gateway: the stand-in insurer, then the sandbox through it, answering uat_gateway',
}

const OPENAPI_TOOLS = 'test/http/openapi-tools.spec.ts'

type Claim = { file: string; heading: string } /** Commands this file's test of that title runs. */ & (
  | { commands: string[]; test: string }
  /** Commands no test runs, and why (printed by the coverage test). */
  | { commands: string[]; excluded: string }
  /**
   * Every shell block under the heading (`blocks` of them), which that spec's test (a title prefix)
   * reads from the docs itself (`reads` is in its body) and runs.
   */
  | { spec: string; test: string; blocks: number; reads: string }
)

const CLAIMS: Claim[] = [
  { file: 'README.md', heading: '## Quick start', commands: ['npm install && npm run start:local'], test: RUN.local },
  { file: 'README.md', heading: '## Quick start', commands: ['npm install && npm start'], test: RUN.hosted },
  // The command that runs this suite: it cannot run inside itself, and CI runs it (.ci/run).
  {
    file: 'README.md',
    heading: '## Quick start',
    commands: ['npm install && npm test'],
    excluded: 'it is the whole test run (unit tests, the builds, this HTTP suite on every target), which cannot run inside itself; CI runs it (.ci/run)',
  },
  {
    file: 'README.md',
    heading: '## One file, no install: the binary',
    test: RUN.binary,
    commands: ['npm run build:binary', './dist/travel-sandbox --help', 'PORT=3000 SANDBOX_DB_PATH=/tmp/sandbox.db ./dist/travel-sandbox --local &'],
  },
  {
    file: 'README.md',
    heading: '## In your own CI: lift the limits',
    test: RUN.ci,
    commands: ['SANDBOX_DB_PATH=:memory: npm run start:local &', 'until curl -sf http://localhost:3000/readyz > /dev/null; do sleep 0.2; done'],
  },
  {
    file: 'README.md',
    heading: '### Walk-through with curl',
    spec: OPENAPI_TOOLS,
    test: 'README walk-through with curl',
    blocks: 1,
    reads: "readmeBlock('### Walk-through with curl', 'sh')",
  },
  // Registering the receiver, then starting it and sending a test event.
  {
    file: 'README.md',
    heading: '### Receive signed events',
    spec: OPENAPI_TOOLS,
    test: 'README receiver',
    blocks: 2,
    reads: "readmeBlock('### Receive signed events', 'sh'",
  },
  {
    file: 'docs/api.md',
    heading: '### Postman and newman',
    spec: OPENAPI_TOOLS,
    test: 'Postman collection',
    blocks: 1,
    reads: "readmeBlock('### Postman and newman', 'sh', 'docs/api.md')",
  },
  {
    file: 'docs/api.md',
    heading: '### A client in another language',
    commands: ['pipx run openapi-python-client generate --url http://localhost:3000/api/sandbox/openapi.json'],
    excluded: 'needs pipx (Python) and PyPI over the network, which CI has neither of',
  },
  {
    file: 'docs/api.md',
    heading: '### A client in another language',
    commands: ['npx @openapitools/openapi-generator-cli generate -g java -o sandbox-client -i http://localhost:3000/api/sandbox/openapi.json'],
    excluded: 'needs Java, and downloads the generator (its npm package, then its jar) over the network, which CI has neither of',
  },
  { file: 'docs/operations.md', heading: '## UAT gateway setup', commands: ['SANDBOX_UAT_URL=https://uat.insurer.example/api npm start'], test: RUN.uatUrl },
  {
    file: 'docs/operations.md',
    heading: '## UAT gateway setup',
    test: RUN.standIn,
    commands: ['PORT=4400 npx bun test/uat-stand-in/server.ts &', 'SANDBOX_UAT_URL=http://127.0.0.1:4400 npm start'],
  },
  // `npm pack ./dist/client` run from the clone, and the install of the tarball it makes.
  {
    file: 'src/client/README.md',
    heading: '## Install',
    spec: OPENAPI_TOOLS,
    test: 'installed client',
    blocks: 1,
    reads: "readmeBlock('## Install', 'sh', 'src/client/README.md')",
  },
]

const wholeBlock = (claim: Claim): claim is Extract<Claim, { spec: string }> => 'spec' in claim
const sameHeading = (claim: { file: string; heading: string }, block: Block) => claim.file === block.file && claim.heading === block.heading

test('every shell block in the docs is run by a test, or its commands excluded with the reason', () => {
  const blocks = shellBlocks()
  expect(blocks.length).toBeGreaterThan(0)
  const problems: string[] = []
  const matched = new Set<Claim>()
  for (const block of blocks) {
    const where = `${block.file}:${block.line} ("${block.heading}")`
    const claims = CLAIMS.filter((claim) => sameHeading(claim, block))
    const readers = claims.filter(wholeBlock)
    if (readers.length > 0) {
      // A block added under the heading would be one the other test does not know of.
      const under = blocks.filter((other) => sameHeading(other, block)).length
      for (const claim of readers) {
        if (under !== claim.blocks) problems.push(`${where}: ${under} shell blocks under this heading, where ${claim.test}… runs ${claim.blocks}`)
        matched.add(claim)
      }
      continue
    }
    const commands = commandsOf(block.text)
    const mine = claims.filter((claim) => !wholeBlock(claim) && claim.commands.every((command) => commands.includes(command)))
    for (const command of commands) {
      const by = mine.filter((claim) => !wholeBlock(claim) && claim.commands.includes(command))
      if (by.length !== 1) problems.push(`${where}: \`${command}\` is ${by.length === 0 ? 'run by no test and excluded by none' : 'claimed twice'}`)
    }
    for (const claim of mine) matched.add(claim)
  }
  for (const claim of CLAIMS.filter((claim) => !matched.has(claim))) {
    const what = wholeBlock(claim) ? 'shell block' : `shell block with ${JSON.stringify(claim.commands)}`
    problems.push(`${claim.file} ("${claim.heading}") has no ${what}: the docs changed; update the claim and its test`)
  }
  // A block another spec runs: that spec has the test, and the test reads the block from the docs.
  for (const claim of CLAIMS.filter(wholeBlock)) {
    const source = readFileSync(join(ROOT, claim.spec), 'utf8')
    const title = new RegExp(`\\btest\\(\\s*['\`]${claim.test.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).exec(source)
    if (!title) {
      problems.push(`${claim.spec} has no test titled "${claim.test}…", which runs ${claim.file} ("${claim.heading}")`)
      continue
    }
    const rest = source.slice(title.index + title[0].length)
    const body = rest.slice(0, /\n\s*test\(/.exec(rest)?.index ?? rest.length)
    if (!body.includes(claim.reads)) problems.push(`${claim.spec} "${claim.test}…" does not read ${claim.file} ("${claim.heading}"): no ${claim.reads} in it`)
  }
  expect(problems).toEqual([])
  for (const claim of CLAIMS) {
    if (!('excluded' in claim)) continue
    const description = `${claim.file} ("${claim.heading}"): ${claim.commands.map((command) => `\`${command}\``).join(', ')}: ${claim.excluded}`
    test.info().annotations.push({ type: 'not run', description })
    console.log(`not run: ${description}`)
  }
})

/** The block a test of this file runs, as the docs write it now (the coverage test checks its commands). */
function blockOf(title: string): { text: string; commands: string[] } {
  const claim = CLAIMS.find((candidate) => !wholeBlock(candidate) && 'test' in candidate && candidate.test === title) as Extract<
    Claim,
    { commands: string[]; test: string }
  >
  const block = shellBlocks().find(
    (candidate) => sameHeading(claim, candidate) && claim.commands.every((command) => commandsOf(candidate.text).includes(command)),
  )
  expect(block, `${claim.file} ("${claim.heading}") has a block with ${JSON.stringify(claim.commands)}`).toBeDefined()
  return { text: block!.text, commands: claim.commands }
}

/** The line of a block that holds one command, as written (its comment is bash's to ignore). */
function lineOf(text: string, command: string): string {
  const line = text.split('\n').find((candidate) => commandsOf(candidate)[0] === command)
  expect(line, `a line that is \`${command}\``).toBeDefined()
  return line!
}

// ---------------------------------------------------------------------------------------------
// Running a block, and the substitutions

/**
 * The suite's own `npm install` has run (npm test needs it), and a second one in the clone while
 * other tests use node_modules would pull it from under them: `npm install && ` is dropped.
 */
function withoutInstall(line: string): string {
  expect(line).toMatch(/^npm install && /)
  return line.replace(/^npm install && /, '')
}

/** A port the docs name, moved to the test's own: the docs' port may be taken on this machine, and tests run side by side. */
function movePort(text: string, documented: number, port: number): string {
  const named = new RegExp(`\\b${documented}\\b`, 'g')
  expect(text, `the block names port ${documented}`).toMatch(named)
  return text.replace(named, String(port))
}

/**
 * The environment a reader's shell has: this worker's, without the sandbox's variables (the
 * suite's, or a developer's), which would change what the commands do.
 */
const shellEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(SANDBOX_\w+|PORT|HOST)$/.test(name)))

interface Shell {
  /** What the block's processes printed so far, stdout and stderr. */
  output(): string
  /** bash's exit code once the block's own script has ended (its background jobs may live on), or null. */
  exitCode(): number | null
  /** Kills the block's process group, background servers included, and waits until none of it runs. */
  kill(): Promise<void>
}

/**
 * Processes of a group that still run. On Linux a zombie does not count: a background server whose
 * bash is gone is reaped by the container's first process, which may never do it.
 */
function liveMembers(group: number): number {
  if (!existsSync('/proc')) {
    try {
      return process.kill(-group, 0) ? 1 : 0
    } catch {
      return 0
    }
  }
  let live = 0
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(pgrp) === group && state !== 'Z') live++
    } catch {
      // ended while we looked
    }
  }
  return live
}

/** Runs a script in bash from the clone, in a process group (and session) of its own. */
function startShell(script: string, env: Record<string, string>): Shell {
  const child = spawn('bash', ['-c', script], { cwd: ROOT, env: { ...shellEnv(), ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  let code: number | null = null
  child.on('exit', (exit, signal) => (code = exit ?? (signal ? 128 : null)))
  const group = child.pid!
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-group, name)
    } catch {
      // the group has ended
    }
  }
  return {
    output: () => output,
    exitCode: () => code,
    kill: async () => {
      signal('SIGTERM')
      // The sandbox stops in under 8 s on SIGTERM (docs/operations.md); past 10, it is killed.
      for (const deadline = Date.now() + 10_000; liveMembers(group) > 0 && Date.now() < deadline; ) await sleep(50)
      signal('SIGKILL')
      for (const deadline = Date.now() + 5_000; liveMembers(group) > 0 && Date.now() < deadline; ) await sleep(50)
      expect(liveMembers(group), `processes of the block still running:\n${output.slice(-2000)}`).toBe(0)
    },
  }
}

/** Waits until the block's script has ended (its background jobs may run on); its exit code. */
async function ended(shell: Shell, timeoutMs: number): Promise<number> {
  for (const deadline = Date.now() + timeoutMs; shell.exitCode() === null; await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`the block has not ended after ${timeoutMs} ms:\n${shell.output().slice(-3000)}`)
  }
  return shell.exitCode()!
}

/**
 * Waits until `url` answers 200. A block whose last command serves in the foreground must not have
 * ended meanwhile (that would be its server stopping).
 */
async function answers(shell: Shell, url: string, options: { foreground: boolean }, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(100)) {
    if (options.foreground && shell.exitCode() !== null)
      throw new Error(`the block ended (${shell.exitCode()}) before ${url} answered:\n${shell.output().slice(-3000)}`)
    if (
      await fetch(url).then(
        async (response) => (await response.arrayBuffer(), response.status === 200),
        () => false,
      )
    )
      return
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms:\n${shell.output().slice(-3000)}`)
  }
}

/**
 * The lines the block printed that hold `text`, once there is one: what a process prints reaches
 * this worker through a pipe, which may be read after an answer it sent later over a socket.
 */
async function printed(shell: Shell, text: string, timeoutMs = 10_000): Promise<string[]> {
  for (const deadline = Date.now() + timeoutMs; ; await sleep(50)) {
    const lines = shell
      .output()
      .split('\n')
      .filter((line) => line.includes(text))
    if (lines.length > 0) return lines
    if (Date.now() > deadline) throw new Error(`no line with ${text} within ${timeoutMs} ms:\n${shell.output().slice(-3000)}`)
  }
}

/** The sandbox's start-up line (`"msg":"listening"`). */
async function startupLine(shell: Shell): Promise<{ url: string; db: string; profile: string }> {
  return JSON.parse((await printed(shell, '"msg":"listening"'))[0]!)
}

/** An address of this machine other than loopback, if it has one: where a server on every interface answers and one on loopback does not. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((address) => address && !address.internal && address.family === 'IPv4')?.address
}

/** More calls in one session, from one network, than the hosted fair-use limit (30) allows: each answered. */
async function beyondHostedLimit(url: string): Promise<void> {
  const opened = await call(url, API.session)
  expect((await expectOk(opened)).data.limits.requests).toBe(1_000_000_000)
  for (let index = 0; index < 35; index++) await expectOk(await call(url, API.search, { body: searchBody(), cookie: opened.token! }))
}

// ---------------------------------------------------------------------------------------------
// The blocks this file runs

test(RUN.local, async ({ blocks }) => {
  test.setTimeout(90_000)
  const { text, commands } = blockOf(RUN.local)
  const port = await testPort()
  const db = blocks.database('docs-start-local')
  // The command relies on the default port (3000) and data file (data/sandbox.db): both moved to
  // the test's own (a developer's sandbox may hold them).
  const shell = blocks.run(withoutInstall(lineOf(text, commands[0]!)), { PORT: String(port), SANDBOX_DB_PATH: db })
  const url = `http://127.0.0.1:${port}`
  await answers(shell, `${url}/readyz`, { foreground: true })
  const started = await startupLine(shell)
  expect(started.url).toBe(`${url}/`)
  expect(started.profile).toMatch(/^local \(fair-use limit: 1000000000 requests per 10 minutes\)$/)
  await beyondHostedLimit(url)
  const outside = outsideAddress()
  if (outside) await expect(call(`http://${outside}:${port}`, '/healthz', { method: 'GET' })).rejects.toMatchObject({ code: 'ECONNREFUSED' })
})

test(RUN.hosted, async ({ blocks }) => {
  test.setTimeout(90_000)
  const { text, commands } = blockOf(RUN.hosted)
  const port = await testPort()
  const db = blocks.database('docs-start-hosted')
  // As above: the default port and data file, moved to the test's own.
  const shell = blocks.run(withoutInstall(lineOf(text, commands[0]!)), { PORT: String(port), SANDBOX_DB_PATH: db })
  const url = `http://127.0.0.1:${port}`
  await answers(shell, `${url}/readyz`, { foreground: true })
  const started = await startupLine(shell)
  expect(started.url).toBe(`http://localhost:${port}/`) // bound to every interface
  expect(started.profile).toMatch(/^hosted \(fair-use limit: 30 requests per 10 minutes\)/)
  // 30 calls in any 10 minutes from one network, then 429.
  for (let index = 0; index < 30; index++) expect((await expectOk(await call(url, API.session))).data.limits.requests).toBe(30)
  await expectError(await call(url, API.session), 429, 'rate_limited')
  const outside = outsideAddress()
  if (outside) expect((await call(`http://${outside}:${port}`, '/healthz', { method: 'GET' })).status).toBe(200)
})

test(RUN.binary, async ({ blocks }) => {
  test.setTimeout(240_000)
  const { text } = blockOf(RUN.binary)
  const port = await testPort()
  const db = blocks.database('docs-binary')
  const before = Date.now()
  // The port, and the file in /tmp, which two runs on this machine would share: the second
  // binary would stop at start-up, the file being in use.
  expect(text).toContain('/tmp/sandbox.db')
  const shell = blocks.run(movePort(text, 3000, port).replaceAll('/tmp/sandbox.db', db))
  // The build replaces dist/travel-sandbox by a new file (a server other tests run from the old
  // one keeps running), so it is safe while the binary target's tests run.
  expect(await ended(shell, 180_000), shell.output()).toBe(0)
  expect(statSync(join(ROOT, 'dist', 'travel-sandbox')).mtimeMs).toBeGreaterThanOrEqual(before - 1_000)
  await printed(shell, 'Usage: travel-sandbox [--local]')
  const unlisted = () =>
    Object.values(SETTINGS)
      .map(({ name }) => name)
      .filter((name) => !new RegExp(`^ +${name} `, 'm').test(shell.output()))
  await expect.poll(unlisted, { message: `--help lists every setting:\n${shell.output().slice(-3000)}` }).toEqual([])
  // The block leaves the binary serving in the background; it waits for nothing, so the test waits until it answers.
  const url = `http://127.0.0.1:${port}`
  await answers(shell, `${url}/readyz`, { foreground: false })
  await expectOk(await call(url, API.session))
  expect(existsSync(db), 'its data in the file the block names').toBe(true)
})

test(RUN.ci, async ({ blocks }) => {
  test.setTimeout(90_000)
  const { text } = blockOf(RUN.ci)
  const port = await testPort()
  // localhost:3000 in the readiness loop, and the default port the start command relies on.
  const shell = blocks.run(movePort(text, 3000, port), { PORT: String(port) })
  // The readiness loop is the block's end: it ends once the sandbox is ready (or never).
  expect(await ended(shell, 60_000), shell.output()).toBe(0)
  const url = `http://127.0.0.1:${port}`
  expect((await call(url, '/readyz', { method: 'GET' })).status).toBe(200)
  const started = await startupLine(shell)
  expect(started.db).toBe(':memory:')
  expect(started.profile).toMatch(/^local \(fair-use limit: 1000000000 requests/)
  await beyondHostedLimit(url)
})

test(RUN.uatUrl, async ({ blocks }) => {
  test.setTimeout(90_000)
  const { text, commands } = blockOf(RUN.uatUrl)
  const port = await testPort()
  const db = blocks.database('docs-uat-url')
  // The default port and data file, moved to the test's own.
  const shell = blocks.run(lineOf(text, commands[0]!), { PORT: String(port), SANDBOX_DB_PATH: db })
  const url = `http://127.0.0.1:${port}`
  await answers(shell, `${url}/readyz`, { foreground: true })
  // With a gateway configured, session creation says uat_gateway (docs/api.md, "What partners see").
  const opened = await call(url, API.session)
  expect(opened.json, opened.text).toMatchObject({ ok: true, mode: 'uat_gateway' })
  // A search asks that insurer first. There is none (.example names resolve nowhere), so the
  // search is answered from the catalogue, and the sandbox logs the fallback with its request id.
  const search = await call(url, API.search, { body: searchBody(), cookie: opened.token!, timeoutMs: 60_000 })
  expect(search.json, search.text).toMatchObject({ ok: true, mode: 'simulation' })
  const fallback = await printed(shell, '"msg":"insurer unavailable; search answered from simulation"')
  expect(fallback.map((line) => JSON.parse(line).request_id)).toEqual([search.json.request_id])
})

test(RUN.standIn, async ({ blocks }) => {
  test.setTimeout(90_000)
  const { text } = blockOf(RUN.standIn)
  const [standInPort, port] = [await testPort(), await testPort()]
  const db = blocks.database('docs-uat-stand-in')
  // The stand-in's port (4400, in both commands), and the sandbox's default port and data file.
  const shell = blocks.run(movePort(text, 4400, standInPort), { PORT: String(port), SANDBOX_DB_PATH: db })
  const url = `http://127.0.0.1:${port}`
  await answers(shell, `http://127.0.0.1:${standInPort}/__stats`, { foreground: true })
  await answers(shell, `${url}/readyz`, { foreground: true })
  const opened = await call(url, API.session)
  const search = await call(url, API.search, { body: searchBody(), cookie: opened.token! })
  expect(search.status, search.text).toBe(200)
  expect(search.json).toMatchObject({ ok: true, mode: 'uat_gateway' })
  expect(search.json.data.plans.length).toBeGreaterThan(0)
  const stats = await (await fetch(`http://127.0.0.1:${standInPort}/__stats`)).json()
  expect(stats.calls, 'calls the stand-in answered').toBeGreaterThan(0)
})
