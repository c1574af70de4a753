import { rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { databaseForFile, eventually, uniqueName } from "@analytics/testing";
import { E2E_ADMIN_TOKEN, signUp, startPlatform, type Platform } from "./harness";

describe("request ids end to end (item 7)", () => {
  const database = databaseForFile();
  let platform: Platform;
  beforeAll(async () => {
    const dataDir = join(tmpdir(), uniqueName("reqid"));
    platform = await startPlatform({ DATABASE_URL: database.url, ADMIN_TOKEN: E2E_ADMIN_TOKEN, LOG_LEVEL: "debug", DATA_DIR: dataDir });
    database.atClose(async () => {
      await platform.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
  });

  it("carries the client's X-Request-Id to the service: the gateway's and the service's log lines name it", async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const res = await api("POST", "/v2/api/products/batch", [{ key: "RID-1", sku: "RID-1" }], { "x-request-id": "e2e-request-77" });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-request-id")).toBe("e2e-request-77");
    const tagged = () =>
      platform.logs.flatMap((line) => {
        try {
          const entry = JSON.parse(line);
          return entry.requestId === "e2e-request-77" ? [entry] : [];
        } catch {
          return [];
        }
      });
    // The gateway writes its request line as the answer leaves: wait for it to reach the pipe.
    await eventually(async () => tagged().some((l) => l.msg === "request"), 10_000, "the request's log line");
    expect(tagged()).toEqual(expect.arrayContaining([
      expect.objectContaining({ msg: "request", statusCode: 201 }),
      expect.objectContaining({ service: "catalogue", rpc: "UpsertProducts" }),
    ]));
    // A streamed answer too: the catalogue's line of GET /products names the request.
    const list = await api("GET", "/v2/api/products", undefined, { "x-request-id": "e2e-request-78" });
    expect(list.status).toBe(200);
    await eventually(
      async () => platform.logs.some((line) => line.includes('"StreamProductsJson"') && line.includes('"requestId":"e2e-request-78"')),
      10_000,
      "the catalogue's line of the streamed call, with its request id",
    );
  });
});
