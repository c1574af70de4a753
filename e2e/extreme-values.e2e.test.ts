import { catalogueV1 } from "@analytics/contracts";
import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * Every writable field of every REST-shaped catalogue message, with values at and past the edge
 * of what the edge's zod and the proto types hold, through every catalogue write route: never a
 * 5xx, and in a batch the bad item is its own 400 naming the field while a good item is written.
 */
const INFINITE = "__1e309__";
const EXTREMES: [string, unknown][] = [
  ["2^40", 2 ** 40],
  ["-1", -1],
  ["1e309", INFINITE],
  ["-0", -0],
  ["1.5", 1.5],
  ["100 kB", "x".repeat(100_000)],
  ["NUL", "a\u0000b"],
  ["true", true],
  ["object", { nested: { deeper: [1, INFINITE] } }],
  ["array", [2 ** 40, "x"]],
];
/** JSON text with 1e309 written as the literal number (JSON.stringify cannot). */
const raw = (body: unknown) => JSON.stringify(body).replaceAll(`"${INFINITE}"`, "1e309");

const READ_ONLY = new Set(["id", "brandId", "categoryId", "skuSynonyms", "prices", "createdAt", "updatedAt", "seq", "brandSeq", "categorySeq"]);
const productFields = catalogueV1.ProductSchema.fields.map((f) => f.jsonName).filter((n) => !READ_ONLY.has(n) && n !== "key");
const costValueFields = catalogueV1.CostCalculationValueSchema.fields.map((f) => f.jsonName);
const keySwitchFields = catalogueV1.KeySwitchSchema.fields.map((f) => f.jsonName);

describe("extreme values on every catalogue write route", () => {
  const platform = platformForFile();
  let acme: Awaited<ReturnType<typeof signUp>>;
  beforeAll(async () => {
    acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
  });

  const send = async (method: string, path: string, body: unknown) => {
    const res = await fetch(platform.baseUrl + path, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${acme.token}` },
      body: raw(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  /** Items with one extreme value each: [label, field path, item]. */
  function productItems(prefix: string) {
    const items: { label: string; field: string; item: Record<string, unknown> }[] = [];
    productFields.forEach((field) =>
      EXTREMES.forEach(([label, value], v) => items.push({ label, field, item: { key: `${prefix}-${field}-${v}`, [field]: value } })),
    );
    costValueFields.forEach((field) =>
      EXTREMES.forEach(([label, value], v) =>
        items.push({ label, field: `costCalculationValues[0].${field}`, item: { key: `${prefix}-cv-${field}-${v}`, costCalculationValues: [{ key: "k", type: 1, [field]: value }] } }),
      ),
    );
    return items;
  }

  function expectPerItem(answers: { statusCode: number; message: string }[], items: { label: string; field: string }[], ok: number[]) {
    answers.forEach((a, n) => {
      const what = `${items[n]?.field ?? "good item"} = ${items[n]?.label ?? ""}: ${a.statusCode} ${a.message}`;
      expect([what, a.statusCode < 500]).toEqual([what, true]);
      if (n < items.length && a.statusCode === 400) {
        const leaf = items[n].field.split(".").pop()!.replace(/\[\d+\]/, "");
        expect([what, a.message.includes(leaf)]).toEqual([what, true]);
      }
      if (n >= items.length) expect([what, ok.includes(a.statusCode)]).toEqual([what, true]);
    });
  }

  it("POST /products/batch: each bad value is its item's 400 naming the field; the good item is written", async () => {
    const items = productItems("B");
    for (let start = 0; start < items.length; start += 900) {
      const part = items.slice(start, start + 900);
      const res = await send("POST", "/v2/api/products/batch", [...part.map((i) => i.item), { key: `GOOD-${start}` }]);
      expect(res.status).toBe(201);
      const answers = res.body.map((a: { statusCode: number; message: string }[]) => a[0]);
      expectPerItem(answers, part, [201]);
      expect(answers.filter((a: { statusCode: number }) => a.statusCode === 400).length).toBeGreaterThan(part.length / 2);
    }
  });

  it("PUT /products: the same, on an existing product", async () => {
    await send("POST", "/v2/api/products", { key: "EXISTING" });
    const items = productItems("U").map((i) => ({ ...i, item: { ...i.item, key: "EXISTING" } }));
    for (let start = 0; start < items.length; start += 900) {
      const part = items.slice(start, start + 900);
      const res = await send("PUT", "/v2/api/products", [...part.map((i) => i.item), { key: "EXISTING", color: "fine" }]);
      expect(res.status).toBeLessThan(500);
      expectPerItem(res.body, part, [200]);
    }
  });

  it("POST /products, key switches, image uploads and mapping tables never answer 5xx", async () => {
    for (const [label, value] of EXTREMES) {
      for (const field of productFields) {
        const res = await send("POST", "/v2/api/products", { key: `S-${field}`, [field]: value });
        expect([`POST /products ${field}=${label}`, res.status < 500]).toEqual([`POST /products ${field}=${label}`, true]);
      }
      const switches = keySwitchFields.map((field) => ({ oldKey: "EXISTING", key: "NEW", sku: "s", [field]: value }));
      const ks = await send("POST", "/v2/api/products/keyswitch", switches);
      expect([`keyswitch ${label}`, ks.status < 500]).toEqual([`keyswitch ${label}`, true]);
      const image = { key: "EXISTING", filename: "f.png", imageData: "iVBORw0KGgo=" };
      for (const field of ["key", "filename", "imageData", "season", "variantGroupId"]) {
        const single = await send("POST", "/v2/api/products/imageupload", { ...image, [field]: value });
        const batch = await send("POST", "/v2/api/products/imageupload/batch", [{ ...image, [field]: value }]);
        expect([`image ${field}=${label}`, single.status < 500 && batch.status < 500]).toEqual([`image ${field}=${label}`, true]);
      }
      const put = await send("PUT", "/v2/api/mappingtables/f?mappingType=stocks", { mappingValues: { a: value } });
      const post = await send("POST", "/v2/api/mappingtables/f", { mappingType: "stocks", mappingValues: { [String(label)]: value } });
      expect([`mapping tables ${label}`, put.status < 500 && post.status < 500]).toEqual([`mapping tables ${label}`, true]);
    }
  }, 120_000);
});
