/**
 * The ceiling of Node and Deno for bench/run.ts, as bench/raw-server.ts is Bun's: the runtime's own
 * HTTP server (`Deno.serve`; `node:http`, under which the sandbox's Node entry runs) answering every
 * request with one fixed JSON body, without routing, sessions, SQLite or logging. Plain JavaScript,
 * so both run it as it is.
 *
 *   PORT=4000 HOST=127.0.0.1 BENCH_BODY_FILE=answer.json node bench/raw-http.mjs
 *   PORT=4000 HOST=127.0.0.1 BENCH_BODY_FILE=answer.json deno run --allow-net --allow-env --allow-read bench/raw-http.mjs
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import process from 'node:process'

const body = readFileSync(process.env.BENCH_BODY_FILE ?? '/dev/null')
const type = 'application/json;charset=utf-8'
const port = Number(process.env.PORT ?? 4000)
const hostname = process.env.HOST ?? '127.0.0.1'
const listening = () => console.log(JSON.stringify({ msg: 'listening', url: `http://${hostname}:${port}/`, body_bytes: body.length }))

if (globalThis.Deno) {
  globalThis.Deno.serve({ port, hostname, onListen: listening }, () => new Response(body, { headers: { 'content-type': type } }))
} else {
  createServer((_request, response) => {
    response.writeHead(200, { 'content-type': type, 'content-length': body.length })
    response.end(body)
  }).listen(port, hostname, listening)
}
process.on('SIGTERM', () => process.exit(0))
