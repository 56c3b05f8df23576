/**
 * Child process for the storage test: opens the shared database file and tries `attempts` admits
 * on one key at one instant, then prints how many were admitted.
 */
import { openEmbedded } from '../../../src/storage/drivers/bun'
import { migrate } from '../../../src/storage/sqlite/migrations'
import { rateLimiter } from './rate-limits'

const [file, limit, attempts, now] = process.argv.slice(2)
const db = openEmbedded(file!)
migrate(db)
const rates = rateLimiter(db, { limit: Number(limit), windowMs: 600_000 })
let admitted = 0
for (let i = 0; i < Number(attempts); i++) if (rates.admit(['n:shared'], Number(now), () => ({ admitted: true })).status.admitted) admitted++
db.close()
console.log(admitted)
