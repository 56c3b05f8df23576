/**
 * @module How both engines present their stores at the seam: every method of every store through
 * one runner (the engine's turn on the connection, its faults as `StorageUnavailable`). Each method
 * is listed, so that the seam's types check the wiring: a store method added to storage.ts and not
 * here does not compile.
 */
import type { Quote, Stores } from './storage'

/** A store's methods as an engine implements them: answering at once (SQLite's statements are synchronous) or as a promise. */
type Implemented<Store> = {
  [Method in keyof Store]: Store[Method] extends (...args: infer Args) => Promise<infer Result> ? (...args: Args) => Result | Promise<Result> : never
}

/** The stores as an engine implements them; `quotes.find` keeps its type parameter, which a mapped type would lose. */
export type StoreImplementations = { [Name in Exclude<keyof Stores, 'quotes'>]: Implemented<Stores[Name]> } & {
  quotes: Omit<Implemented<Stores['quotes']>, 'find'> & {
    find<Plan>(sessionId: number, planId: string): Quote<Plan> | undefined | Promise<Quote<Plan> | undefined>
  }
}

/** Runs a store's call and answers what it does, as a promise. */
export type Runner = <T>(call: () => T | Promise<T>) => Promise<T>

/** Each method of each store called through `run`. */
export function storesThrough({ sessions, quotes, policies, idempotency, events, webhooks, requestLog }: StoreImplementations, run: Runner): Stores {
  return {
    sessions: {
      isLive: (id, now) => run(() => sessions.isLive(id, now)),
      clockOffset: (id, now) => run(() => sessions.clockOffset(id, now)),
      setClockOffset: (id, offsetMs) => run(() => sessions.setClockOffset(id, offsetMs)),
      byRef: (ref, now) => run(() => sessions.byRef(ref, now)),
    },
    quotes: {
      unsaved: (sessionId, given) => run(() => quotes.unsaved(sessionId, given)),
      record: (sessionId, given, now) => run(() => quotes.record(sessionId, given, now)),
      find: <Plan>(sessionId: number, planId: string) => run(() => quotes.find<Plan>(sessionId, planId)),
    },
    policies: {
      insert: (policy) => run(() => policies.insert(policy)),
      find: (sessionId, ref) => run(() => policies.find(sessionId, ref)),
      endorse: (policy, endorsement, sequence) => run(() => policies.endorse(policy, endorsement, sequence)),
      endorsements: (policyId) => run(() => policies.endorsements(policyId)),
      cancel: (policy) => run(() => policies.cancel(policy)),
      update: (policy) => run(() => policies.update(policy)),
      ofSession: (sessionId) => run(() => policies.ofSession(sessionId)),
      coverageDue: (now, limit) => run(() => policies.coverageDue(now, limit)),
    },
    idempotency: {
      find: (sessionId, keyHash) => run(() => idempotency.find(sessionId, keyHash)),
      save: (sessionId, keyHash, fingerprint, response, now) => run(() => idempotency.save(sessionId, keyHash, fingerprint, response, now)),
    },
    events: {
      append: (event) => run(() => events.append(event)),
      list: (sessionId, afterId, now, limit) => run(() => events.list(sessionId, afterId, now, limit)),
      find: (sessionId, ref) => run(() => events.find(sessionId, ref)),
      requeue: (eventId, now) => run(() => events.requeue(eventId, now)),
    },
    requestLog: {
      list: (sessionId, query) => run(() => requestLog.list(sessionId, query)),
      find: (sessionId, requestId) => run(() => requestLog.find(sessionId, requestId)),
    },
    webhooks: {
      find: (sessionId) => run(() => webhooks.find(sessionId)),
      set: (sessionId, webhook, now) => run(() => webhooks.set(sessionId, webhook, now)),
    },
  }
}

/** `work`'s result as a promise, a fault of the engine's (`asStorageError`) as `StorageUnavailable`. */
export async function guarded<T>(work: () => T | Promise<T>, asStorageError: (error: unknown) => unknown): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw asStorageError(error)
  }
}
