import { rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, eventually } from "@analytics/testing";
import { E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp, startPlatform } from "./harness";

/** Issue 7 "nothing lost": a client that dies after sending a batch can send it again. */
describe("a batch whose client went away", () => {
  const platform = platformForFile();

  it("is committed once, and sending it again changes nothing but the answer", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Dropped socket");
    const batch = Array.from({ length: 300 }, (_, i) => ({ key: `DROP-${i}`, sku: `sku-${i}`, productName: `Product ${i}` }));
    const body = JSON.stringify(batch);
    const { port } = new URL(platform.baseUrl);
    // The whole request is sent; once it is committed, the socket closes without reading the answer
    // (the client never learns whether its batch went through).
    const socket = net.connect(Number(port), "127.0.0.1");
    socket.on("error", () => undefined);
    socket.write(`POST /v2/api/products/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acme.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const total = async () => Number((await acme.api("GET", "/v2/api/products?pageSize=1")).headers.get("x-total-count"));
    await eventually(async () => (await total()) === 300, 20_000, "the batch to be committed");
    socket.destroy();

    const again = await acme.api("POST", "/v2/api/products/batch", batch);
    expect(again.status).toBeLessThan(300);
    expect(again.body.filter((r: { statusCode: number }) => r.statusCode >= 300)).toEqual([]);
    expect(await total()).toBe(300);
    const listed = (await acme.api("GET", "/v2/api/products?pageSize=1000")).body as { key: string }[];
    expect(new Set(listed.map((p) => p.key)).size).toBe(300);
  }, 60_000);
});

/** Issue 13 "the start log tells the user where things are", and `npm start` listens locally by default. */
describe("npm start's log", () => {
  it("prints the API and /docs URLs, says the admin API is off and how to turn it on, and listens on 127.0.0.1", async () => {
    const database = await createTestDatabase();
    const platform = await startPlatform({ DATABASE_URL: database.url, NATS_URL: undefined, HOST: undefined, ADMIN_TOKEN: undefined, DATA_DIR: join(tmpdir(), database.name) });
    try {
      const ready = platform.logs.map((line) => JSON.parse(line)).find((entry) => entry.msg === "platform ready");
      const port = new URL(platform.baseUrl).port;
      expect(ready).toMatchObject({
        address: `http://127.0.0.1:${port}`,
        api: `http://127.0.0.1:${port}/v2/api`,
        docs: `http://127.0.0.1:${port}/docs`,
        admin: expect.stringContaining("set ADMIN_TOKEN"),
      });
      expect((await fetch(`${platform.baseUrl}/docs/`)).status).toBe(200);
    } finally {
      await platform.stop();
      await database.drop();
      rmSync(join(tmpdir(), database.name), { recursive: true, force: true });
    }
  }, 60_000);
});
