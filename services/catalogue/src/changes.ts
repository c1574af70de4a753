import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { catalogueV1, toRestJson } from "@analytics/contracts";
import { inTransaction, type Tx } from "@analytics/db";
import { enqueue, type OutboxMessage } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import { productFromRow, type Product } from "./resources";

/**
 * How a change leaves the catalogue: in one transaction with its outbox rows on
 * `analytics.catalogue.<entity>.<verb>`, each carrying the resource as a GET returns it; the relay
 * is woken after the commit.
 */

export type ProductVerb = "created" | "updated" | "key_switched" | "image_set";

/** Commits `work` (run again on a deadlock or serialization failure) and wakes the outbox relay. */
export async function commit<T>(ctx: ServiceContext, work: (tx: Tx) => Promise<T>): Promise<T> {
  const result = await inTransaction(ctx.db, work);
  ctx.relay.kick();
  return result;
}

/** A product write: as commit, holding the account's product lock (see lockAccountProducts). */
export function commitProductWrite<T>(ctx: ServiceContext, accountId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  return commit(ctx, async (tx) => {
    await repo.lockAccountProducts(tx, accountId);
    return work(tx);
  });
}

/** The outbox message of one resource: `data` is `{ [entity]: <REST JSON> }`. */
export function resourceMessage<D extends DescMessage>(
  accountId: string,
  subject: { entity: string; verb: string; key: string },
  schema: D,
  resource: MessageShape<D>,
): OutboxMessage {
  return {
    subject: `analytics.catalogue.${subject.entity}.${subject.verb}`,
    accountId,
    data: { [subject.key]: toRestJson(schema, resource) },
  };
}

/**
 * Reads the changed products back as stored and writes one outbox row for each (after `extra`),
 * in the caller's transaction. Returns them by id.
 */
export async function announceProducts(
  tx: Tx,
  accountId: string,
  verbs: Map<string, ProductVerb>,
  extra: OutboxMessage[] = [],
): Promise<Map<string, Product>> {
  const products = (await repo.findProducts(tx, accountId, [...verbs.keys()])).map(productFromRow);
  const messages = products.map((p) =>
    resourceMessage(accountId, { entity: "sku", verb: verbs.get(p.id)!, key: "product" }, catalogueV1.ProductSchema, p),
  );
  await enqueue(tx, [...extra, ...messages]);
  return new Map(products.map((p) => [p.id, p]));
}
