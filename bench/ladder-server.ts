/**
 * @module The middle rungs of the cost ladder (bench/ladder.ts): the sandbox's own modules put
 * together one layer at a time, every rung answering `POST /api/sandbox/plans/search`. Below the
 * handler rung the answer is a captured real one (BENCH_BODY_FILE), serialised by Elysia as the real
 * route's is. Rungs, each with everything before it:
 *
 *   elysia     bare Elysia (the app's settings), one route
 *   hooks      + the request's own steps (request id and headers, error envelope, log line written nowhere)
 *   lookup     + admission and testing aids, admission's storage call only reading (the allowance, no write)
 *   admission  + the real admission: session lookup, rate check, counting (in memory, written behind)
 *   body       + the body step (size, media type, JSON, personal data) and the route's body schema
 *   handler    + the real handler (searchPlans, recording quotes) and the success envelope
 *
 * The top rung is the sandbox itself (src/runtime/bun/server.ts): + CORS (off), the answer's schema check and the log line.
 *
 *   BENCH_RUNG=admission BENCH_BODY_FILE=answer.json PORT=4000 SANDBOX_DB_PATH=x.db bun bench/ladder-server.ts
 */
import { readFileSync } from 'node:fs'
import { Elysia } from 'elysia'
import { appSettings } from '../src/app'
import { healthRoutes } from '../src/http/health'
import { PATHS } from '../src/http/paths'
import { accessLog } from '../src/http/steps/access-log'
import { success } from '../src/http/envelope'
import { errorAnswer } from '../src/http/steps/error-answer'
import { bodyReader } from '../src/http/steps/request-body'
import { requestStart } from '../src/http/steps/request-start'
import type { RequestState } from '../src/http/request-state'
import { testingAids } from '../src/http/steps/testing-aids'
import { SearchBody, type SearchRequest } from '../src/modules/plans/model'
import { searchPlans } from '../src/modules/plans/service'
import { sessionAdmission } from '../src/http/steps/admission'
import { configOrExit } from '../src/runtime/start'
import { createServices } from '../src/modules/services'
import { openStorage } from '../src/storage'
import { openEmbedded } from '../src/runtime/bun/sqlite'
import type { Storage } from '../src/storage/storage'

export const RUNGS = ['elysia', 'hooks', 'lookup', 'admission', 'body', 'handler'] as const
export type Rung = (typeof RUNGS)[number]

/** The storage with admission reduced to one read: what admission costs without the write. */
function readsOnly(storage: Storage): Storage {
  return {
    ...storage,
    admit: async ({ network, now }) => ({ kind: 'admitted', status: await storage.allowance([network], now), session: null, created: false }),
  }
}

async function main() {
  const level = RUNGS.indexOf(process.env.BENCH_RUNG as Rung)
  if (level < 0) throw new Error(`BENCH_RUNG must be one of ${RUNGS.join(', ')}`)
  const has = (rung: Rung) => level >= RUNGS.indexOf(rung)
  const answer = JSON.parse(readFileSync(process.env.BENCH_BODY_FILE!, 'utf8'))
  const config = configOrExit(process.env)
  const checkpointerUrl = new URL('../src/runtime/bun/checkpointer.ts', import.meta.url).href
  const storage = await openStorage(config, (path) => openEmbedded(path, { checkpointerUrl }))
  const services = createServices({ storage: has('admission') ? storage : readsOnly(storage), config, log: () => {} })

  const handler = has('handler')
    ? async ({ sandbox, body }: { sandbox: RequestState; body: SearchRequest }) => {
        const { mode, data } = await searchPlans(services, { session: sandbox.session!, requestId: sandbox.requestId }, body)
        sandbox.mode = mode
        return success(sandbox, data)
      }
    : () => answer
  const { clock, log } = services
  const none = () => new Elysia()
  const app = new Elysia(appSettings())
    .use(healthRoutes(services.storage))
    .use(has('hooks') ? requestStart({ config, clock, mode: 'simulation', peerAddress: (request, server) => server?.requestIP(request)?.address }) : none())
    .use(has('hooks') ? errorAnswer({ config, clock, storage: services.storage, log }) : none())
    .use(has('lookup') ? sessionAdmission(services) : none())
    .use(has('lookup') ? testingAids(config) : none())
    .use(has('body') ? bodyReader : none())
    .use(has('hooks') ? accessLog(log, services.storage, { textAnswered: true }) : none()) // before the route, as a hook must be to reach it
    .post(PATHS.search, handler as () => unknown, has('body') ? { body: SearchBody } : {})
    .listen({ port: config.port, hostname: config.host })
  const server = app.server!
  console.log(JSON.stringify({ msg: 'listening', url: server.url.toString(), rung: RUNGS[level] }))
  process.on('SIGTERM', async () => {
    await server.stop()
    await storage.close()
    process.exit(0)
  })
}

if (import.meta.main) await main()
