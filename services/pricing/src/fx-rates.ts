import { topics, type pricingV1 } from "@analytics/contracts";
import { type Db, type Tx } from "@analytics/db";
import { invalid, notFound } from "@analytics/errors";
import { enqueue, outboxEntry, type OutboxEntry } from "@analytics/outbox";
import { commit, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import type { FxRow, NewRate } from "./repository";
import { fxRatesTable } from "./resources";
import { Problems } from "./validation";

/**
 * FX rates. The ranges [fromDate, toDate) of one (fromCurrency, toCurrency, externalReference)
 * never overlap: a new rate that starts inside an open range closes it at the new fromDate; any
 * other overlap is a 400 naming the clashing rate. Writers of one triple are serialised by an
 * advisory lock, and the exclusion constraint fx_rates_no_overlap holds whatever happens.
 */

export function fxRateFromRow(row: FxRow): pricingV1.FxRate {
  return fxRatesTable.messageOf(row);
}

const triple = (r: Pick<NewRate, "from_currency" | "to_currency" | "external_reference">) => `${r.from_currency}/${r.to_currency}/${r.external_reference}`;
const describe = (r: Pick<FxRow, "id" | "from_date" | "to_date">) => `rate ${r.id} (${r.from_date} to ${r.to_date ?? "open"})`;

function checked(rates: pricingV1.FxRate[]): NewRate[] {
  const p = new Problems();
  if (!rates.length) p.add("", "at least one rate is required");
  const rows = rates.map((r, i) => {
    const at = rates.length > 1 || i > 0 ? `[${i}].` : "";
    // The FxRate's rules (pricing.proto), then what they cannot say.
    p.list.push(...fxRatesTable.violations(r, at.slice(0, -1)));
    if (r.fromCurrency) p.currency(`${at}fromCurrency`, r.fromCurrency);
    if (r.toCurrency) p.currency(`${at}toCurrency`, r.toCurrency);
    if (r.rate && !p.list.some((v) => v.path === `${at}rate`)) p.decimal(`${at}rate`, r.rate.value, { min: 0, exclusiveMin: true });
    if (r.toDate && r.fromDate && r.toDate <= r.fromDate) p.add(`${at}toDate`, "must be after fromDate");
    if (r.fromCurrency && r.fromCurrency === r.toCurrency) p.add(`${at}toCurrency`, "must differ from fromCurrency");
    return fxRatesTable.rowOf(r) as NewRate;
  });
  p.check("fx rates");
  // Within one request: an open rate followed by a later one of its triple ends where that one starts.
  const byTriple = new Map<string, NewRate[]>();
  for (const r of rows) (byTriple.get(triple(r)) ?? byTriple.set(triple(r), []).get(triple(r))!).push(r);
  for (const group of byTriple.values()) {
    group.sort((a, b) => a.from_date.localeCompare(b.from_date));
    for (let i = 0; i + 1 < group.length; i++) {
      const [a, b] = [group[i], group[i + 1]];
      if (a.to_date === null && a.from_date < b.from_date) a.to_date = b.from_date;
      if (a.to_date! > b.from_date || a.from_date === b.from_date) {
        throw invalid(`fx rates overlap within the request (${triple(a)} from ${a.from_date} and from ${b.from_date})`, [{ path: "fromDate", message: "overlaps another rate of the request" }]);
      }
    }
  }
  return rows;
}

export async function listFxRates(db: Db, accountId: string, req: pricingV1.ListFxRatesRequest): Promise<FxRow[]> {
  return repo.listFxRates(db, accountId, req);
}

const message = (accountId: string, row: FxRow) => ({ accountId, fxRate: fxRateFromRow(row) });

/**
 * Closes open ranges the new rates start inside, refuses other overlaps, inserts; five statements.
 * A rate stored exactly as sent (a client's retry) is answered as stored: not inserted again, not
 * announced.
 */
async function insertRates(tx: Tx, accountId: string, sent: NewRate[], announce: OutboxEntry[]): Promise<FxRow[]> {
  await repo.lockFxTriples(tx, [...new Set(sent.map((r) => `pricing.fx:${accountId}:${triple(r)}`))]);
  const replayed = await repo.storedFxRates(tx, accountId, sent);
  const rates = sent.filter((_, ord) => !replayed.has(ord));
  if (!rates.length && !announce.length) return sent.map((_, ord) => replayed.get(ord)!);
  // The earliest new start of each triple closes a stored open range that began before it.
  const closed = await repo.closeOpenFxRanges(tx, accountId, rates);
  const clash = await repo.firstOverlappingFxRate(tx, accountId, rates);
  if (clash) throw invalid(`the range overlaps ${describe(clash)} of ${triple(clash)}`, [{ path: "fromDate", message: `overlaps ${describe(clash)}` }]);
  const created = await repo.insertFxRates(tx, accountId, rates);
  await enqueue(tx, [
    ...announce,
    ...closed.map((r) => outboxEntry(topics.pricingFxRateClosed, accountId, String(r.id), message(accountId, r))),
    ...created.map((r) => outboxEntry(topics.pricingFxRateCreated, accountId, String(r.id), message(accountId, r))),
  ]);
  const inserted = [...created];
  return sent.map((_, ord) => replayed.get(ord) ?? inserted.shift()!);
}

/** The exclusion constraint's refusal (a writer that got past the check) is a 400 too. */
function overlapToInvalid(error: unknown): never {
  if ((error as { code?: string })?.code === "23P01") throw invalid("the range overlaps another rate of the same currencies and reference", [{ path: "fromDate", message: "overlaps another rate" }]);
  throw error;
}

export async function createFxRates(ctx: ServiceContext, accountId: string, rates: pricingV1.FxRate[]): Promise<FxRow[]> {
  const rows = checked(rates);
  const created = await commit(ctx, (tx) => insertRates(tx, accountId, rows, [])).catch(overlapToInvalid);
  return created;
}

async function deleteRow(tx: Tx, accountId: string, id: bigint): Promise<FxRow> {
  if (id <= 0n || id > BigInt(Number.MAX_SAFE_INTEGER)) throw notFound(`fx rate ${id} not found`);
  const row = await repo.deleteFxRate(tx, accountId, Number(id));
  if (!row) throw notFound(`fx rate ${id} not found`);
  return row;
}

/** PUT: deletes the rate and creates the new one (a new id), in one transaction. */
export async function replaceFxRate(ctx: ServiceContext, accountId: string, id: bigint, rate: pricingV1.FxRate | undefined): Promise<FxRow> {
  const rows = checked(rate ? [rate] : []);
  const [created] = await commit(ctx, async (tx) => {
    const old = await deleteRow(tx, accountId, id);
    return insertRates(tx, accountId, rows, [outboxEntry(topics.pricingFxRateDeleted, accountId, String(old.id), message(accountId, old))]);
  }).catch(overlapToInvalid);
  return created;
}

export async function deleteFxRate(ctx: ServiceContext, accountId: string, id: bigint): Promise<void> {
  await commit(ctx, async (tx) => {
    const old = await deleteRow(tx, accountId, id);
    await enqueue(tx, [outboxEntry(topics.pricingFxRateDeleted, accountId, String(old.id), message(accountId, old))]);
  });
}
