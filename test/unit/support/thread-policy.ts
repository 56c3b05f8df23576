import { readdirSync, readFileSync } from 'node:fs'

/** The scheduling policy of a thread of this process (Linux; 5: SCHED_IDLE): field 41 of its stat. */
export const policyOf = (tid: number) => statField(tid, 41)

/** The nice value of a thread of this process: field 19 of its stat. */
export const niceOf = (tid: number) => statField(tid, 19)

/** Field `n` (from 1, as proc(5) numbers them) of a thread's stat; the name, field 2, may hold spaces. */
const statField = (tid: number, n: number) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[n - 3])

/** The slice the kernel gives a thread of this process, in ns (its `se.slice`); null where it does not say. */
export function sliceOf(tid: number): number | null {
  const line = /^se\.slice\s*:\s*(\d+)/m.exec(readFileSync(`/proc/self/task/${tid}/sched`, 'utf8'))
  return line ? Number(line[1]) : null
}

/** This process's threads called `name` (`/proc/self/task/<tid>/comm`). */
export const threadsNamed = (name: string): number[] =>
  readdirSync('/proc/self/task')
    .filter((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === name)
    .map(Number)
