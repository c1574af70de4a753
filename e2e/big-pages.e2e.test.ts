import { request } from "node:http";
import pg from "pg";
import { eventually } from "@analytics/testing";
import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * The published client reads GET /products 10000 a page until an empty page. Pages over one
 * chunk (500 products) are streamed; they must still be whole, in creation order, with headers.
 */
describe("big product pages over HTTP", () => {
  const platform = platformForFile();

  it("reads a catalogue 2400 a page, across chunk boundaries, until an empty page", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const total = 2600;
    for (let start = 0; start < total; start += 1000) {
      // Keys sort differently from creation order, so an order by key would show.
      const batch = Array.from({ length: Math.min(1000, total - start) }, (_, i) => ({ key: `K-${(total - start - i).toString().padStart(5, "0")}`, productName: `P ${start + i}` }));
      expect((await acme.api("POST", "/v2/api/products/batch", batch)).status).toBe(201);
    }
    const read: string[] = [];
    for (let page = 1; ; page++) {
      const res = await acme.api("GET", `/v2/api/products?pageSize=2400&page=${page}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-total-count")).toBe(String(total));
      if (!res.body.length) break;
      read.push(...res.body.map((p: { productName: string }) => p.productName));
    }
    expect(read).toEqual(Array.from({ length: total }, (_, i) => `P ${i}`));
    expect((await acme.api("GET", "/v2/api/products?pageSize=10000")).body).toHaveLength(total);
    expect((await acme.api("GET", "/v2/api/products?pageSize=10001")).status).toBe(400);
  }, 60_000);

  it("answers each product with the fields in the same order as POST /products does", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const posted = await acme.api("POST", "/v2/api/products", { key: "ORDER-1", productName: "P", costCalculationPrice: 1.5 });
    expect(posted.status).toBe(201);
    const listed = await acme.api("GET", "/v2/api/products?key=ORDER-1");
    expect(Object.keys(listed.body[0])).toEqual(Object.keys(posted.body[0]));
    expect(listed.body[0]).toEqual(posted.body[0]);
  });

  it("a bad filter is still a 400 before anything is streamed", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const res = await acme.api("GET", "/v2/api/products?pageSize=5000&skus=a%00b");
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ statusCode: 400 });
  });

  it("a client that goes away in the middle of a big page cancels it; the next reads are whole", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const batch = (from: number) => Array.from({ length: 1000 }, (_, i) => ({ key: `G-${from + i}`, externalAttributes: { text: "x".repeat(2000) } }));
    for (const from of [0, 1000, 2000]) expect((await acme.api("POST", "/v2/api/products/batch", batch(from))).status).toBe(201);
    for (let round = 0; round < 3; round++) {
      // Read the first bytes of a 3000-product page (6 chunks, about 7 MB), then hang up.
      const received = await new Promise<number>((resolve, reject) => {
        const req = request(`${platform.baseUrl}/v2/api/products?pageSize=3000`, { headers: { authorization: `Bearer ${acme.token}`, "accept-encoding": "identity" } }, (res) => {
          res.once("data", (chunk: Buffer) => {
            req.destroy();
            resolve(chunk.length);
          });
        });
        req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
        req.end();
      });
      expect(received).toBeGreaterThan(0);
    }
    const whole = await acme.api("GET", "/v2/api/products?pageSize=3000");
    expect(whole.status).toBe(200);
    expect(whole.body.map((p: { key: string }) => p.key)).toEqual(Array.from({ length: 3000 }, (_, i) => `G-${i}`));
  }, 60_000);
});

describe("a big page read by a slow client", () => {
  const DEADLINE_MS = 5000;
  // A short call deadline, so that reading the page takes longer than it; not so short that a
  // chunk misses it on a loaded 2-core CI machine (1 s did once with the suite's heaviest tests
  // beside it, 2.5 s once with two CPU-bound processes beside the suite).
  const platform = platformForFile({ SERVICE_CALL_TIMEOUT_MS: String(DEADLINE_MS) });

  it("is answered whole although reading it takes longer than a call's deadline (each chunk has it)", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    // 2,000 products of about 10 kB (20 MB of JSON, more than the sockets between client,
    // gateway and catalogue buffer), written directly: the routes are not what is tested.
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    await db.query(
      `INSERT INTO catalogue.products (id, account_id, key, external_attributes)
       SELECT gen_random_uuid(), $1, 'S-' || lpad(g::text, 5, '0'), jsonb_build_object('text', repeat('x', 10000)) FROM generate_series(1, 2000) g`,
      [acme.accountID],
    );
    await db.end();
    const started = performance.now();
    let stalledPastTwoDeadlines = false;
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(`${platform.baseUrl}/v2/api/products?pageSize=2000`, { headers: { authorization: `Bearer ${acme.token}`, "accept-encoding": "identity" } }, async (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks).toString()));
        res.on("error", reject);
        res.pause();
        // The client reads nothing until the read has lasted two call deadlines, the answer
        // still unfinished (its bytes waiting in the client's buffer): what is tested is that a
        // read may outlast a deadline.
        try {
          if (res.statusCode !== 200) throw new Error(`the page was answered ${res.statusCode}`);
          await eventually(async () => res.readableLength > 0 && !res.complete && performance.now() - started > 2 * DEADLINE_MS, 6 * DEADLINE_MS, "a stalled read longer than two deadlines");
          stalledPastTwoDeadlines = true;
        } catch (error) {
          reject(error);
        }
        res.resume();
      });
      req.on("error", reject);
      req.end();
    });
    expect(stalledPastTwoDeadlines).toBe(true);
    const products = JSON.parse(body) as { key: string }[];
    expect(products).toHaveLength(2_000);
    expect(products[1_999].key).toBe("S-02000");
  }, 120_000);
});
