/**
 * @module How both engines present their stores at the seam: every method of every store through
 * one wrapper (the engine's turn on the connection, its faults as `StorageUnavailable`).
 */
import type { Stores } from './storage'

/** A store's methods as SQLite implements them: synchronous, the connection's calls being so. */
export type Synchronous<Store> = {
  [Method in keyof Store]: Store[Method] extends (...args: infer Args) => Promise<infer Result> ? (...args: Args) => Result : never
}

export type SynchronousStores = { [Name in keyof Stores]: Synchronous<Stores[Name]> }

/** Each method of each store called through `around`, which answers what the call does, as a promise. */
export function storesAround(stores: SynchronousStores | Stores, around: (call: () => unknown) => Promise<unknown>): Stores {
  const wrap = (store: object) =>
    Object.fromEntries(
      Object.entries(store).map(([name, method]) => [name, (...args: unknown[]) => around(() => (method as (...args: unknown[]) => unknown)(...args))]),
    )
  return Object.fromEntries(Object.entries(stores).map(([name, store]) => [name, wrap(store)])) as unknown as Stores
}

/** `work`'s result as a promise, a fault of the engine's (`asStorageError`) as `StorageUnavailable`. */
export async function guarded<T>(work: () => T | Promise<T>, asStorageError: (error: unknown) => unknown): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw asStorageError(error)
  }
}
