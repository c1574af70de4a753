import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { importToRest, productPriceToRest, productToRest, purchaseOrderToRest, stockTriggerToRest, topics, type ordersV1 } from "@analytics/contracts";
import { mapInSlices, type Tx } from "@analytics/db";
import { dispatch, on, type ConsumerDefinition, type Delivery } from "@analytics/rpc";
import * as repo from "./repository/queue";
import type { EntrySpec, NewEvent } from "./repository/queue";
import { insertWebhookEvents, type WebhookEventSpec } from "./repository/webhooks";
import { EVENT_TYPE } from "./resources";

/**
 * Which integration messages become queue entries (CONTRACT.md, "Event types"), and with what
 * payload: the resource as a GET returns it. A product change and a price change are both an
 * `update_sku` with the product and its prices, composed from the replica both feed
 * (migrations/003_product_replica.ts). A message that is no event for the account (a purchase
 * order that never was a draft, a price of a product never announced) makes none.
 */

/** One price as the replica keeps it (migrations/004_price_entries.ts). */
type PriceEntry = { priceId: string; version: string; listOrder: string; priceOrder: string; deleted: boolean; price: unknown };
type Change = { accountId: string; productId: string; product?: { version: number; json: Record<string, unknown> }; price?: PriceEntry };

const purchaseOrderTopics = [topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated];

/** The product or price a delivery changes in the replica. */
const changeOf = dispatch<Change | undefined>(
  on(topics.catalogueSkuTopics, ({ accountId, message: m }) =>
    m.product ? { accountId, productId: m.product.id, product: { version: Number(m.version), json: productToRest(m.product) } } : undefined,
  ),
  on(topics.pricingPriceTopics, ({ accountId, subject, message: m }) => {
    // A message from before prices travelled one by one has no price_id: nothing to apply.
    if (!m.priceId || !m.price) return undefined;
    const price = {
      priceId: m.priceId,
      version: String(m.version),
      listOrder: String(m.listOrder),
      priceOrder: String(m.priceOrder),
      deleted: subject === topics.pricingPriceDeleted.subject,
      // The product's `prices` entry, as GET /products shows it (the ProductPrice message).
      price: productPriceToRest(m.price),
    };
    return { accountId, productId: m.productId, price };
  }),
);

/** The purchase order or stock trigger a delivery changes, with the version its message carries. */
const orderOrTriggerOf = dispatch(
  on(purchaseOrderTopics, (d) => ({ key: `purchase_order:${d.message.purchaseOrderId}`, version: Number(d.message.version) })),
  on(topics.inventoryStockTriggerTopics, (d) => ({ key: `stock_trigger:${d.message.stockTriggerId}`, version: Number(d.message.version) })),
);

const entry = (d: Delivery, eventType: string, payload: unknown): NewEvent => ({ accountId: d.accountId, eventType, payload });

/** The order of a draft_po_change: a draft purchase order is created or changed, or leaves draft. */
const draftOrderOf = dispatch(on(purchaseOrderTopics, (d) => ((d.message.wasDraft || d.message.isDraft) && d.message.purchaseOrder) || undefined));

/** Entries whose message carries the whole payload (no replica needed). */
const directEntryOf = dispatch<NewEvent | undefined>(
  on(purchaseOrderTopics, (d) => {
    const order = draftOrderOf(d);
    return order ? entry(d, EVENT_TYPE.DRAFT_PO_CHANGE, purchaseOrderToRest(order)) : undefined;
  }),
  on(topics.inventoryStockTriggerTopics, (d) => (d.message.trigger ? entry(d, EVENT_TYPE.SKU_WAREHOUSE_SETTINGS_CHANGE, stockTriggerToRest(d.message.trigger)) : undefined)),
);

/**
 * Lines of draft orders announced before orders kept their product's integer id (no skuSeq) take
 * it from the product replica, so that their payload's skuId is the integer id too (the replica
 * has it once the product's message is through; until then it stays null).
 */
async function withIntegerSkuIds(tx: Tx, orders: { accountId: string; order: ordersV1.PurchaseOrder }[]): Promise<void> {
  const lines = orders.flatMap(({ accountId, order }) => order.items.filter((i) => i.skuSeq === undefined && i.skuId).map((item) => ({ accountId, item })));
  if (!lines.length) return;
  const seqs = await repo.replicaProductSeqs(tx, lines.map(({ accountId, item }) => ({ accountId, productId: item.skuId })));
  for (const { accountId, item } of lines) item.skuSeq = seqs.get(`${accountId}/${item.skuId}`);
}

/** The subjects that can make entries (each a durable consumer of the events service). */
export const queueTopics = [...changeOf.topics, ...orderOrTriggerOf.topics];
const topicOf = new Map(queueTopics.map((t) => [t.subject, t]));

/**
 * A message in its aggregate's order: `key` the aggregate whose versions it is one of (a product,
 * a price, a purchase order, a stock trigger), `entryAggregate` the one its entry belongs to (a
 * price's product). `held`: it came from held_versions.
 */
type Item = { delivery: Delivery; change?: Change; key: string; version: number; entryAggregate: string; held?: { expired: boolean } };

function itemOf(delivery: Delivery, change: Change | undefined): Item | undefined {
  if (change?.product) return { delivery, change, key: `sku:${change.productId}`, version: change.product.version, entryAggregate: `sku:${change.productId}` };
  if (change?.price) return { delivery, change, key: `price:${change.price.priceId}`, version: Number(change.price.version), entryAggregate: `sku:${change.productId}` };
  const o = orderOrTriggerOf(delivery);
  return o && { delivery, key: o.key, version: o.version, entryAggregate: o.key };
}

const sequenceKey = (i: Item) => `${i.delivery.accountId}/${i.key}`;
const lockKey = (accountId: string, aggregate: string) => `events.queue:${accountId}/${aggregate}`;

/** A held message as it came, decoded again. */
function heldItem(h: repo.HeldRow): Item | undefined {
  const topic = topicOf.get(h.subject);
  if (!topic) return undefined;
  const delivery: Delivery = { id: h.message_id, subject: h.subject, accountId: h.account_id, occurredAt: h.occurred_at, topic, message: fromBinary(topic.schema, h.payload) };
  const item = itemOf(delivery, changeOf(delivery));
  return item && { ...item, held: { expired: h.expired } };
}

/** What passing the messages in version order decided: in queue order, and what to write. */
interface Walk {
  passed: Item[];
  hold: Item[];
  /** Held rows to forget: passed, or passed by. */
  release: Item[];
  advanced: Map<string, { account_id: string; aggregate: string; version: number }>;
  /** Per aggregate whose gap was given up on: the versions passed by, and whether any version of it had passed before. */
  superseded: { key: string; from: number; to: number; firstSeen: boolean }[];
}

/**
 * Per aggregate, in version order from its last passed version: the next version passes (and the
 * ones after it that are now consecutive), an older or repeated one is a replay and passes
 * nothing, a later one is held. With `supersede`, a gap behind which a version has waited past
 * the bound is passed by: its missing versions are superseded, the held ones after it pass.
 * Aggregates keep the order they first appear in; each one's versions come in version order.
 */
function walk(last: Map<string, number>, candidates: Item[], supersede: boolean): Walk {
  const byKey = new Map<string, Item[]>();
  for (const c of candidates) (byKey.get(sequenceKey(c)) ?? byKey.set(sequenceKey(c), []).get(sequenceKey(c))!).push(c);
  const result: Walk = { passed: [], hold: [], release: [], advanced: new Map(), superseded: [] };
  for (const [k, items] of byKey) {
    let current = last.get(k) ?? 0;
    // Stable: a version both held and delivered again passes as the held one (its row is forgotten).
    items.sort((a, b) => a.version - b.version || Number(Boolean(b.held)) - Number(Boolean(a.held)));
    for (const [i, item] of items.entries()) {
      // The gap before it has been open since the oldest version held above it came.
      if (item.version > current + 1 && supersede && items.slice(i).some((later) => later.held?.expired)) {
        result.superseded.push({ key: k, from: current + 1, to: item.version - 1, firstSeen: !last.has(k) });
        current = item.version - 1;
      }
      if (item.version === current + 1) {
        current = item.version;
        result.passed.push(item);
        if (item.held) result.release.push(item);
      } else if (item.version <= current) {
        if (item.held) result.release.push(item);
      } else if (!item.held) {
        result.hold.push(item);
      }
    }
    if (current > (last.get(k) ?? 0)) result.advanced.set(k, { account_id: items[0].delivery.accountId, aggregate: items[0].key, version: current });
  }
  return result;
}

/**
 * Puts messages in their aggregates' order (walk) under each aggregate's lock, with the versions
 * held for them, and queues the entries of those that pass; records what passed and holds the
 * rest. The sweep passes no messages, only aggregates whose held versions waited past the bound.
 */
async function queueInOrder(tx: Tx, incoming: Item[], expired?: { keys: (repo.SequenceKey & { entry_aggregate: string })[]; holdMs: number }): Promise<Walk> {
  const sweep = expired?.keys ?? [];
  await repo.lockAggregates(tx, [
    ...new Set([
      ...incoming.flatMap((i) => [lockKey(i.delivery.accountId, i.key), lockKey(i.delivery.accountId, i.entryAggregate)]),
      ...sweep.flatMap((k) => [lockKey(k.account_id, k.aggregate), lockKey(k.account_id, k.entry_aggregate)]),
    ]),
  ]);
  const keys = new Map<string, repo.SequenceKey>();
  for (const i of incoming) keys.set(sequenceKey(i), { account_id: i.delivery.accountId, aggregate: i.key });
  for (const k of sweep) keys.set(`${k.account_id}/${k.aggregate}`, { account_id: k.account_id, aggregate: k.aggregate });
  const { last, held } = await repo.sequenceState(tx, [...keys.values()], expired?.holdMs);
  const heldItems = (await mapInSlices(held, heldItem)).filter((i) => i !== undefined);
  const result = walk(last, [...incoming, ...heldItems], expired !== undefined);
  // In rounds of one version per price at most: a price entry is composed from the replica, so a
  // price's two versions passing together make two entries, each showing its own. (Product,
  // order and trigger entries carry their version's payload: one round takes any number.)
  const rounds: Item[][] = [];
  const passedBefore = new Map<string, number>();
  for (const item of result.passed) {
    const round = item.change?.price ? (passedBefore.get(sequenceKey(item)) ?? 0) : 0;
    passedBefore.set(sequenceKey(item), round + 1);
    (rounds[round] ??= []).push(item);
  }
  for (const round of rounds) await queueEntries(tx, round);
  const version = (i: Item) => ({ account_id: i.delivery.accountId, aggregate: i.key, version: i.version });
  await repo.advanceSequences(tx, [...result.advanced.values()]);
  await repo.releaseHeld(tx, result.release.map(version));
  await repo.holdVersions(
    tx,
    result.hold.map((i) => ({
      ...version(i),
      entry_aggregate: i.entryAggregate,
      message_id: i.delivery.id,
      subject: i.delivery.subject,
      occurred_at: i.delivery.occurredAt,
      payload: Buffer.from(toBinary(i.delivery.topic.schema, i.delivery.message)),
    })),
  );
  return result;
}

/**
 * The entries of messages that passed, in queue order, and the replica they update. Postgres
 * composes each update_sku payload (the product and its live prices, in list order) inside the
 * INSERT: with many price lists a batch's payloads are megabytes that never pass through this
 * process. A product message's entry has its own product with the prices as they were before
 * this batch's price messages; then a product's price messages of the batch make one entry (the
 * replica's product and prices after them). So a product change and a price change handled
 * together make two entries that differ, each change shown once, and never an older state after
 * a newer one. A product never announced makes none.
 */
async function queueEntries(tx: Tx, passed: Item[]): Promise<void> {
  if (!passed.length) return;
  const key = (c: { accountId: string; productId: string }) => `${c.accountId}/${c.productId}`;
  // Each product's and price's newest (the items of one aggregate pass in version order).
  const products = new Map<string, Change>();
  const prices = new Map<string, Change>();
  for (const { change: c } of passed) {
    if (c?.product) products.set(key(c), c);
    else if (c?.price) prices.set(`${c.accountId}/${c.price.priceId}`, c);
  }
  if (products.size) {
    await repo.storeNewerProducts(
      tx,
      [...products.values()].map((c) => ({ account_id: c.accountId, product_id: c.productId, version: c.product!.version, product: c.product!.json })),
    );
  }
  await withIntegerSkuIds(
    tx,
    passed.flatMap(({ delivery, change }) => {
      const order = change ? undefined : draftOrderOf(delivery);
      return order ? [{ accountId: delivery.accountId, order }] : [];
    }),
  );
  const specs: EntrySpec[] = [];
  for (const { delivery, change: c, entryAggregate: aggregate } of passed) {
    if (c?.product) {
      specs.push({ n: specs.length, account_id: c.accountId, event_type: EVENT_TYPE.UPDATE_SKU, aggregate, payload: c.product.json, product_id: c.productId });
    } else if (!c) {
      const d = directEntryOf(delivery);
      if (d) specs.push({ n: specs.length, account_id: d.accountId, event_type: d.eventType, aggregate, payload: d.payload });
    }
  }
  if (specs.length) await repo.insertEvents(tx, specs);
  if (!prices.size) return;
  // The products whose prices this batch changed (a price row inserted, or replaced by a newer version).
  const repriced = new Set<string>();
  const rows = await repo.storeNewerPrices(
    tx,
    [...prices.values()].map(({ accountId, productId, price: p }) => ({
      account_id: accountId,
      price_id: p!.priceId,
      product_id: productId,
      version: p!.version,
      list_order: p!.listOrder,
      price_order: p!.priceOrder,
      deleted: p!.deleted,
      price: p!.price,
    })),
  );
  for (const r of rows) repriced.add(key({ accountId: r.account_id, productId: r.product_id }));
  const priceSpecs: EntrySpec[] = [];
  for (const { change: c, entryAggregate: aggregate } of passed) {
    if (c?.price && repriced.delete(key(c))) priceSpecs.push({ n: priceSpecs.length, account_id: c.accountId, event_type: EVENT_TYPE.UPDATE_SKU, aggregate, product_id: c.productId });
  }
  if (priceSpecs.length) await repo.insertEvents(tx, priceSpecs);
}

/**
 * One consumer: a batch of new messages becomes its entries in each aggregate's version order, a
 * handful of statements in all (inbox, locks, sequences, products, prices, entries).
 *
 * Messages of one aggregate can arrive out of their write order (a batch redelivered after the
 * replica holding it died, two replicas pulling from one consumer, created and updated on
 * consumers of their own), and a client applying entries in order must never see an aggregate go
 * back. Producers give each write of a product, price, purchase order or stock trigger the next
 * version (+1) and send every version through their outbox, so a gap is a message still on its
 * way: a version whose predecessor has not passed is held (held_versions, in this transaction)
 * and passes when it has; a version at or below the last passed one is a replay and makes no
 * entry. Every version of an order advances its order, an entry made only by one that was or is
 * a draft. Batches that share an aggregate run one after the other (a transaction lock per
 * aggregate, taken in one order). A gap open past EVENTS_GAP_HOLD_SECONDS is given up on by the
 * sweep (releaseExpiredHolds): the held versions pass, the missing ones are superseded.
 */
export const queueConsumer: ConsumerDefinition = {
  name: "queue",
  topics: queueTopics,
  handle: async (tx: Tx, deliveries) => {
    // In slices (a product's REST JSON each): a batch in one go held the process's other work waiting.
    const items = (await mapInSlices(deliveries, (d) => itemOf(d, changeOf(d)))).filter((i) => i !== undefined);
    if (items.length) await queueInOrder(tx, items);
  },
};

/**
 * The sweep: releases the versions of these aggregates held longer than `holdMs` (read again
 * under their locks, so two replicas sweeping at once release each once), superseding the missing
 * versions before them. Answers the ranges superseded.
 */
export async function releaseExpiredHolds(tx: Tx, keys: (repo.SequenceKey & { entry_aggregate: string })[], holdMs: number): Promise<Walk["superseded"]> {
  return (await queueInOrder(tx, [], { keys, holdMs })).superseded;
}

/** A finished import job as its import.finished event: the Import object as GET /imports/{id} answers it. */
const importFinishedOf = dispatch<WebhookEventSpec | undefined>(
  on(topics.importFinished, ({ accountId, message: m }) =>
    m.import ? { account_id: accountId, event_type: EVENT_TYPE.IMPORT_FINISHED, aggregate: `import:${m.import.id}`, payload: importToRest(m.import) } : undefined,
  ),
);

/**
 * import.finished (CONTRACT "Imports"): a job that reached a final state, pushed to the webhook
 * endpoints that subscribe to it. A webhook-only type, no queue entry: the job itself
 * (GET /imports/{id}) is the record an account reads. A message handled again (a redelivery)
 * makes nothing: its inbox row is in the batch's transaction (consumerHandler).
 */
export const importsConsumer: ConsumerDefinition = {
  name: "imports",
  topics: importFinishedOf.topics,
  handle: async (tx: Tx, deliveries) => insertWebhookEvents(tx, deliveries.map((d) => importFinishedOf(d)).filter((e) => e !== undefined)),
};
