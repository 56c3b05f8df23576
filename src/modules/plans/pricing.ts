/**
 * @module Deterministic pricing of catalogue plans: which plans fit a trip and its travellers, and
 * what they cost. Pure functions of the catalogue and the request, so the same trip, ages and
 * currency give the same plans, ids, prices and order on every runtime and after every restart.
 */
import { createHash } from 'node:crypto'
import { toDayNumber } from '../../domain/dates'
import type { Trip } from '../../domain/trip'
import type { Catalogue, PlanDefinition } from './catalogue'
import type { PlanModel } from './model'

/** A plan as partners see it (spec 2.5). */
export type Plan = typeof PlanModel.static

export interface PricedPlan {
  product: string
  plan: Plan
  premiumMinor: number
}

/** `domestic` when the trip stays in its country, else the destination's pricing region. */
export function regionOf(catalogue: Catalogue, trip: Trip): string {
  if (trip.origin_country === trip.destination_country) return 'domestic'
  const region = Object.entries(catalogue.regions).find(([, countries]) => countries.includes(trip.destination_country))
  return region?.[0] ?? catalogue.fallback_region
}

/** Cover days, both ends included. */
export function coverDays(trip: Trip): number {
  return toDayNumber(trip.end_date)! - toDayNumber(trip.start_date)! + 1
}

function ageFactor(catalogue: Catalogue, age: number): number {
  return (catalogue.age_factors.find((band) => age <= band.max_age) ?? catalogue.age_factors.at(-1)!).factor
}

/** Premium in paise, or null when the plan does not cover this trip or one of these ages. */
export function premiumInPaise(catalogue: Catalogue, definition: PlanDefinition, trip: Trip, ages: number[]): number | null {
  return premiumFor(catalogue, definition, regionOf(catalogue, trip), coverDays(trip), ages)
}

function premiumFor(catalogue: Catalogue, definition: PlanDefinition, region: string, days: number, ages: number[]): number | null {
  const dailyRate = definition.daily_rate_inr[region]
  if (dailyRate === undefined || ages.some((age) => age > definition.max_age)) return null
  const travellers = ages.reduce((sum, age) => sum + Math.round(dailyRate * 100 * days * ageFactor(catalogue, age)), 0)
  return travellers + Math.round(definition.policy_fee_inr * 100)
}

/** Converts paise to the currency's minor units at the catalogue's fixed rate. */
export function toMinorUnits(catalogue: Catalogue, paise: number, currency: string): number {
  const { per_inr, minor_unit } = catalogue.currencies[currency]!
  return Math.round((paise / 100) * per_inr * 10 ** minor_unit)
}

/** Minor units as the decimal amount the API shows (`12345` USD cents → `123.45`). */
export function toAmount(catalogue: Catalogue, minor: number, currency: string): number {
  return minor / 10 ** catalogue.currencies[currency]!.minor_unit
}

/** Stable across sessions and restarts: a digest of the product and everything that priced it. */
export function planId(product: string, trip: Trip, ages: number[], currency: string): string {
  const input = [product, trip.origin_country, trip.destination_country, trip.start_date, trip.end_date, ages.join(','), currency].join('|')
  return `plan_${product}_${createHash('sha256').update(input).digest('hex').slice(0, 12)}`
}

/** Searches priced lately, per catalogue: partners repeat a search far more often than they vary it. */
const recentlyPriced = new WeakMap<Catalogue, Map<string, PricedPlan[]>>()
const MOST_REMEMBERED = 256

/**
 * Every plan that fits, cheapest first, ties broken by plan_id. `ages` must be sorted. The plans are
 * shared by every caller asking the same (the last few hundred searches are remembered): read them, never change them.
 */
export function priceCatalogue(catalogue: Catalogue, trip: Trip, ages: number[], currency: string): PricedPlan[] {
  let remembered = recentlyPriced.get(catalogue)
  if (!remembered) recentlyPriced.set(catalogue, (remembered = new Map()))
  const key = [trip.origin_country, trip.destination_country, trip.start_date, trip.end_date, ages.join(','), currency].join('|')
  const known = remembered.get(key)
  if (known) return known.slice()
  const priced = priceAnew(catalogue, trip, ages, currency)
  if (remembered.size >= MOST_REMEMBERED) remembered.delete(remembered.keys().next().value!)
  remembered.set(key, priced)
  return priced.slice()
}

function priceAnew(catalogue: Catalogue, trip: Trip, ages: number[], currency: string): PricedPlan[] {
  const priced: PricedPlan[] = []
  const region = regionOf(catalogue, trip)
  const days = coverDays(trip)
  for (const definition of catalogue.plans) {
    const paise = premiumFor(catalogue, definition, region, days, ages)
    if (paise === null) continue
    const premiumMinor = toMinorUnits(catalogue, paise, currency)
    priced.push({
      product: definition.product,
      premiumMinor,
      plan: {
        plan_id: planId(definition.product, trip, ages, currency),
        name: definition.name,
        tier: definition.tier,
        currency,
        sum_insured: toAmount(catalogue, toMinorUnits(catalogue, definition.sum_insured_inr * 100, currency), currency),
        premium: toAmount(catalogue, premiumMinor, currency),
        cover_type: definition.cover_type,
        benefits_summary: definition.benefits_summary,
      },
    })
  }
  return priced.sort(byPremiumThenId)
}

/** The contract's order of plans: premium ascending, then plan_id. */
export function byPremiumThenId(a: PricedPlan, b: PricedPlan): number {
  return a.premiumMinor - b.premiumMinor || (a.plan.plan_id < b.plan.plan_id ? -1 : a.plan.plan_id > b.plan.plan_id ? 1 : 0)
}
