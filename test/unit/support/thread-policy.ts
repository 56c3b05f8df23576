import { readFileSync } from 'node:fs'

/** The scheduling policy of a thread of this process (Linux; 5: SCHED_IDLE): field 41 of its stat. */
export const policyOf = (tid: number) => statField(tid, 41)

/** The nice value of a thread of this process: field 19 of its stat. */
export const niceOf = (tid: number) => statField(tid, 19)

/** Field `n` (from 1, as proc(5) numbers them) of a thread's stat; the name, field 2, may hold spaces. */
const statField = (tid: number, n: number) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[n - 3])
