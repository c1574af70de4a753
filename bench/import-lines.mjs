// What bench/import.mjs imports and bench/import-floor.mjs runs the design's statements on, so
// that both measure the same rows: the i-th product and the i-th transaction (one item, naming one
// of 1000 keys), a file of them as NDJSON, and the floor both set beside it, raw COPY of the same
// rows into the resource's table.
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";

export const product = (i) => ({ key: `SKU-${i}`, sku: `SKU-${i}`, productName: `Product ${Math.floor(i / 10)}`, season: "SS27", color: ["black", "white", "red"][i % 3], size: ["S", "M", "L", "XL"][i % 4] });
export const transaction = (i) => ({
  externalTransactionID: `T-${i}`,
  type: 1,
  channel: 1,
  currencyCode: "EUR",
  createdDate: "2026-11-01T10:00:00Z",
  items: [{ externalItemID: "1", key: `SKU-${i % 1000}`, quantity: 1, moneyItemTotalNet: 10, moneyItemTotalVat: 2.5 }],
});

/** `count` lines of text (`text(i)`, each ending its line) as a stream made as it is read, 1000 lines a piece. */
function inPieces(count, text) {
  return Readable.from(
    (function* () {
      for (let at = 0; at < count; at += 1000) {
        let piece = "";
        for (let i = at; i < Math.min(count, at + 1000); i++) piece += text(i);
        yield Buffer.from(piece);
      }
    })(),
  );
}

/** NDJSON of `count` lines (`line(i)`), made as it is read. */
export const ndjson = (count, line) => inPieces(count, (i) => JSON.stringify(line(i)) + "\n");

/** A value as COPY's text format writes it. */
export const copyText = (value) => String(value).replace(/\\/g, "\\\\").replace(/\t/g, "\\t").replace(/\n/g, "\\n");

/**
 * Each resource's table as raw COPY fills it: its columns and the row of the i-th line (the
 * transaction's line as its body; the service's body is the same fields in proto JSON).
 */
export const tables = {
  products: { table: "catalogue.products", columns: ["id", "account_id", "key", "sku", "product_name", "season", "color", "size"], line: product, row: (accountId, p) => [randomUUID(), accountId, p.key, p.sku, p.productName, p.season, p.color, p.size] },
  transactions: { table: "orders.transactions", columns: ["id", "account_id", "external_transaction_id", "body"], line: transaction, row: (accountId, t) => [randomUUID(), accountId, t.externalTransactionID, JSON.stringify(t)] },
};

/** The floor: raw COPY of `count` lines of `resource` into its table on `db` (a pg client), one transaction rolled back; milliseconds. */
export async function rawCopy(db, resource, count) {
  const { table, columns, line, row } = tables[resource];
  const accountId = randomUUID();
  const t = performance.now();
  await db.query("BEGIN");
  const stream = db.query(copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN`));
  await pipeline(inPieces(count, (i) => row(accountId, line(i)).map(copyText).join("\t") + "\n"), stream);
  await db.query("ROLLBACK");
  return performance.now() - t;
}
