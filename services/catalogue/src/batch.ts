import { mapInSlices, type Tx } from "@analytics/db";
import type { FieldViolation } from "@analytics/errors";
import { itemOutcome, type ItemOutcome as Outcome, type ServiceContext } from "@analytics/rpc";
import { commitProductWrite } from "./changes";
import type { Product } from "./resources";
import { violationMessage } from "./validation";

/** One item's answer (a product, unless said otherwise). */
export type ItemOutcome<T = Product> = Outcome<T>;

export function answer(statusCode: number, reference: string, referenceField: string, message: string): ItemOutcome<never> {
  return itemOutcome(statusCode, reference, referenceField, message);
}

export function invalidItem(reference: string, referenceField: string, violations: FieldViolation[]): ItemOutcome<never> {
  return { ...answer(400, reference, referenceField, violationMessage(violations)), violations };
}

/**
 * The course of every product batch: each item is checked alone (`check` answers the invalid
 * ones); the others are written together in one product write, in which `write` answers each of
 * them. So a failing item never stops the others and never half-writes itself. Outcomes come back
 * in request order.
 */
export async function productBatch<I, T = Product>(
  ctx: ServiceContext,
  accountId: string,
  items: I[],
  check: (item: I, index: number) => ItemOutcome<never> | undefined,
  write: (tx: Tx, valid: { i: number; item: I }[], reply: (i: number, outcome: ItemOutcome<T>) => void) => Promise<void>,
): Promise<ItemOutcome<T>[]> {
  const outcomes: (ItemOutcome<T> | undefined)[] = await mapInSlices(items, check);
  const valid = items.flatMap((item, i) => (outcomes[i] ? [] : [{ i, item }]));
  if (valid.length) {
    await commitProductWrite(ctx, accountId, (tx) => write(tx, valid, (i, outcome) => void (outcomes[i] = outcome)));
  }
  return outcomes.map((o) => o ?? answer(500, "", "", "item not answered"));
}
