import type { Client } from "@connectrpc/connect";
import type { catalogueV1 } from "@analytics/contracts";
import type { CallAs } from "../clients";

const INTEGER_ID = /^[1-9][0-9]{0,15}$/;

/**
 * Product ids as the services filter by them: each integer id (REST `id`) the catalogue knows is
 * sent as its UUID, in one ResolveSkus call for the request. A service's replica learns a
 * product's integer id only when the product is next written, so an integer id sent on would miss
 * the rows written before; UUIDs, and integer ids of no product (they match nothing), go as sent.
 */
export async function productUuids(catalogue: Client<typeof catalogueV1.CatalogueService>, options: ReturnType<CallAs>, ids: string[]): Promise<string[]> {
  const integers = [...new Set(ids.filter((id) => INTEGER_ID.test(id)))];
  if (!integers.length) return ids;
  const { skus } = await catalogue.resolveSkus({ references: integers.map((id) => ({ seq: BigInt(id) })) }, options);
  const uuidOf = new Map(integers.map((id, n) => [id, skus[n]?.found ? skus[n].id : id]));
  return ids.map((id) => uuidOf.get(id) ?? id);
}

/**
 * The integer ids of products named by UUID (those the catalogue knows), in one ResolveSkus call:
 * for stored references kept before their integer id was (purchase-order lines).
 */
export async function productSeqs(catalogue: Client<typeof catalogueV1.CatalogueService>, options: ReturnType<CallAs>, uuids: string[]): Promise<Map<string, bigint>> {
  const distinct = [...new Set(uuids)];
  if (!distinct.length) return new Map();
  const { skus } = await catalogue.resolveSkus({ references: distinct.map((id) => ({ id })) }, options);
  return new Map(distinct.flatMap((id, n) => (skus[n]?.found ? [[id, skus[n].seq]] : [])));
}
