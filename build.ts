/**
 * @module Builds the typed client's package (`src/client/`) in `dist/client` (`npm run
 * build:client`; `npm pack ./dist/client` makes the tarball a partner installs: without the `./`,
 * npm reads `dist/client` as a GitHub repository): the client as one ES module, the declarations
 * its types reach (the app's routes and schemas, emitted by tsc from the source), a package.json
 * whose dependencies are only what the client needs (Eden, and Elysia and TypeBox for the types,
 * never the server's database drivers or PDF library), and its README. A build script, so outside
 * `src/`, at the top like the other build and test configuration.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

const ROOT = import.meta.dirname
const OUT = join(ROOT, 'dist', 'client')
const DECLARATIONS = join(ROOT, '.tmp', 'client-types')
/** The packages the client's declarations may name; anything else would be a dependency the client does not need. */
const DEPENDENCIES = ['@elysiajs/eden', 'elysia', '@sinclair/typebox']

const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

function emitDeclarations(): void {
  rmSync(DECLARATIONS, { recursive: true, force: true })
  const tsc = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(ROOT, 'src', 'client', 'tsconfig.json')], { encoding: 'utf8' })
  if (tsc.status !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`)
}

/**
 * Copies `client/index.d.ts` and every declaration it reaches into the package, each relative import
 * given the `.js` path an ES module needs (`nodenext` resolution refuses `./app`), and checks that
 * nothing else is imported than the client's dependencies.
 */
function copyDeclarations(): void {
  const pending = ['client/index.d.ts']
  const copied = new Set<string>()
  while (pending.length > 0) {
    const file = pending.pop()!
    if (copied.has(file)) continue
    copied.add(file)
    const text = readFileSync(join(DECLARATIONS, file), 'utf8').replace(
      /(from |import\()(['"])([^'"]+)\2/g,
      (whole, keyword: string, quote: string, specifier: string) => {
        if (!specifier.startsWith('.')) {
          if (!DEPENDENCIES.some((name) => specifier === name || specifier.startsWith(`${name}/`)))
            throw new Error(`${file} imports ${specifier}, which the client does not depend on`)
          return whole
        }
        const target = normalize(join(dirname(file), specifier))
        const declaration = existsSync(join(DECLARATIONS, `${target}.d.ts`)) ? `${target}.d.ts` : join(target, 'index.d.ts')
        pending.push(declaration)
        const path = relative(dirname(file), declaration).replace(/\.d\.ts$/, '.js')
        return `${keyword}${quote}${path.startsWith('.') ? path : `./${path}`}${quote}`
      },
    )
    mkdirSync(dirname(join(OUT, 'types', file)), { recursive: true })
    writeFileSync(join(OUT, 'types', file), text)
  }
}

async function bundle(): Promise<void> {
  const built = await Bun.build({
    entrypoints: [join(ROOT, 'src', 'client', 'index.ts')],
    target: 'node',
    format: 'esm',
    external: ['@elysiajs/eden'],
    outdir: OUT,
  })
  if (!built.success) throw new Error(built.logs.join('\n'))
}

function manifest(): void {
  const types = './types/client/index.d.ts'
  writeFileSync(
    join(OUT, 'package.json'),
    `${JSON.stringify(
      {
        name: 'travel-protection-sandbox-client',
        version: root.version,
        description:
          "Typed client (Eden Treaty) for the travel protection sandbox: every path, body, header and answer checked against the server's own schemas.",
        type: 'module',
        exports: { '.': { types, default: './index.js' } },
        main: './index.js',
        types,
        sideEffects: false,
        dependencies: Object.fromEntries(DEPENDENCIES.map((name) => [name, root.dependencies[name]])),
      },
      null,
      2,
    )}\n`,
  )
  cpSync(join(ROOT, 'src', 'client', 'README.md'), join(OUT, 'README.md'))
}

rmSync(OUT, { recursive: true, force: true })
emitDeclarations()
copyDeclarations()
await bundle()
manifest()
console.log(`built ${relative(ROOT, OUT)} (npm pack ./${relative(ROOT, OUT)} makes the tarball)`)
