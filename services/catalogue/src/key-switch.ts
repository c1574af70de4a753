import { catalogueV1 } from "@analytics/contracts";
import type { ServiceContext } from "@analytics/rpc";
import { answer, invalidItem, productBatch, type ItemOutcome } from "./batch";
import { announceProducts } from "./changes";
import * as repo from "./repository";
import type { KeySwitchRow } from "./repository";
import { textViolations } from "./validation";

/**
 * POST /products/keyswitch: the product found by `oldKey` (a key or an old key) gets `key`, `sku`
 * and the optional fields sent; its previous key becomes a synonym that still finds it. 404 for
 * an unknown old key, 409 for a key another product holds (as key or synonym) or for an item that
 * touches a product or key of an earlier item of the same batch (send that one in a later request).
 */
export function switchKeys(ctx: ServiceContext, accountId: string, switches: catalogueV1.KeySwitch[]): Promise<ItemOutcome[]> {
  const check = (s: catalogueV1.KeySwitch) => {
    const problems = textViolations(catalogueV1.KeySwitchSchema, s);
    return problems.length ? invalidItem(s.oldKey, "oldKey", problems) : undefined;
  };
  return productBatch(ctx, accountId, switches, check, async (tx, valid, reply) => {
    const matches = await repo.resolveReferences(tx, accountId, valid.map((v) => ({ key: v.item.oldKey })));
    const owners = await repo.keyOwners(tx, accountId, valid.map((v) => v.item.key));
    const claimed = new Set<string>();
    const rows: KeySwitchRow[] = [];
    const applied: number[] = [];
    valid.forEach(({ i, item: s }, n) => {
      const match = matches[n];
      if (!match) return reply(i, answer(404, s.oldKey, "oldKey", `product ${s.oldKey} not found`));
      const owner = owners.get(s.key)?.id;
      if (owner && owner !== match.id) return reply(i, answer(409, s.oldKey, "oldKey", `key ${s.key} belongs to another product`));
      const claims = [`id:${match.id}`, `key:${match.key}`, `key:${s.oldKey}`, `key:${s.key}`];
      if (claims.some((c) => claimed.has(c))) return reply(i, answer(409, s.oldKey, "oldKey", "touches a product or key of an earlier item of this batch"));
      claims.forEach((c) => claimed.add(c));
      rows.push({
        id: match.id,
        previous_key: match.key,
        key: s.key,
        sku: s.sku,
        ean: s.ean,
        season: s.season,
        product_group_id: s.productGroupId,
        variant_group_id: s.variantGroupId,
      });
      applied.push(i);
    });
    const changed = await repo.switchKeys(tx, accountId, rows);
    const products = await announceProducts(tx, accountId, new Map([...changed].map((id) => [id, "key_switched" as const])));
    // A switch to what the product has already (a re-send) is unchanged: no new version, no message.
    applied.forEach((i, n) => reply(i, changed.has(rows[n].id) ? { ...answer(200, switches[i].oldKey, "oldKey", "key switched"), value: products.get(rows[n].id) } : answer(200, switches[i].oldKey, "oldKey", "unchanged")));
  });
}
