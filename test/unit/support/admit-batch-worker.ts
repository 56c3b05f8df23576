/**
 * Child process for the group-commit test: opens the shared database file through the SQLite engine
 * and sends `attempts` admissions on one network in one turn (so they are batched), then prints how
 * many were admitted and how many transactions it opened.
 */
import { openEmbedded } from '../../../src/storage/drivers/bun'
import { sqliteStorage } from '../../../src/storage/sqlite/engine'

const [file, limit, attempts, now] = process.argv.slice(2)
const connection = openEmbedded(file!)
let begins = 0
const db = { ...connection, exec: (sql: string) => ((begins += sql === 'BEGIN IMMEDIATE' ? 1 : 0), connection.exec(sql)) }
const storage = sqliteStorage(db, { rateLimit: Number(limit), rateWindowMs: 600_000, maxMegabytes: 0 })
begins = 0 // the migration's own
const answers = await Promise.all(Array.from({ length: Number(attempts) }, () =>
  storage.admit({ tokenHash: null, network: 'n:shared', now: Number(now), create: null })))
connection.close()
console.log(JSON.stringify({ admitted: answers.filter((answer) => answer.kind === 'admitted').length, begins }))
