import { readFileSync } from 'node:fs'

/** The scheduling policy of a thread of this process (Linux; 5: SCHED_IDLE): field 41 of its stat, after the name in parentheses. */
export const policyOf = (tid: number) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[38])
