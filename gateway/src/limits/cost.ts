/** A write costs 1 per item, at least this much (CONTRACT "Rate limits"). */
export const MIN_WRITE_COST = 5;
/** and at most the largest batch a route takes (1000 items): a body over it is a 400 that does no work. */
export const MAX_WRITE_COST = 1000;

/**
 * What a request costs of its account's bucket: a read 1, a write 1 per item, at least
 * MIN_WRITE_COST and at most MAX_WRITE_COST. Items are the elements of every array of the body at
 * any depth (a batch's elements, and the lines nested in them: a purchase order's items and their
 * deliveries, a transaction's items and statements; the `keys` of DELETE /prices/batch) and the
 * values of a mapping table's `mappingValues`; read before validation, so whatever the body says.
 */
export function costOf(method: string, body: unknown): number {
  if (method === "GET" || method === "HEAD") return 1;
  return Math.min(MAX_WRITE_COST, Math.max(MIN_WRITE_COST, MAX_WRITE_COST - budgetLeft(body, MAX_WRITE_COST)));
}

/**
 * What is left of `budget` once the body's items are counted off it; counting stops when it is
 * spent, so a 10 MiB body is not walked to its end. Objects are walked for the arrays they hold.
 */
function budgetLeft(value: unknown, budget: number): number {
  if (value === null || typeof value !== "object") return budget;
  if (Array.isArray(value)) {
    budget -= value.length;
    for (let i = 0; i < value.length && budget > 0; i++) budget = budgetLeft(value[i], budget);
    return budget;
  }
  const fields = value as Record<string, unknown>;
  for (const name in fields) {
    if (budget <= 0) break;
    const field = fields[name];
    if (name === "mappingValues" && field !== null && typeof field === "object" && !Array.isArray(field)) {
      for (const _ in field) if (--budget <= 0) break;
    } else budget = budgetLeft(field, budget);
  }
  return budget;
}
