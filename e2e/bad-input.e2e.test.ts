import { ERROR_CODES, type ErrorCode } from "@analytics/errors";
import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * "400 with the field that is wrong, never a 500": every operation of the OpenAPI document gets
 * malformed paths, queries and bodies, and must answer a 4xx GeneralResponse with a code of its status.
 */
describe("bad input never gives a 500", () => {
  const platform = platformForFile();

  const nul = "a\u0000b";
  const pathValues = ["x", nul, "%00", "9".repeat(300), "00000000-0000-0000-0000-000000000000", "-1"];
  const queries = ["", `?page=0`, `?pageSize=99999`, `?page=abc`, `?mappingType=${encodeURIComponent(nul)}`, `?key=${encodeURIComponent(nul)}`, `?event_type=${encodeURIComponent(nul)}`, `?skus=${encodeURIComponent(nul)}&seasons=`, "?status=nope"];
  const bodies: unknown[] = [
    null,
    "text",
    42,
    [],
    {},
    [null, 1, "x", {}],
    { key: nul, id: nul, name: nul, payload: nul, mappingValues: { [nul]: nul }, mappingType: "products" },
    [{ key: "k", status: 1e308, year: -5, moq: 1.5, startDate: "2026-02-30", externalAttributes: { [nul]: 1 } }],
    [{ id: nul, status: "completed" }],
    { payload: { deep: [nul] } },
  ];

  it("answers 4xx on every operation", async () => {
    const { token } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const doc = (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const failures: string[] = [];
    let calls = 0;
    for (const [template, operations] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(operations)) {
        const paths = template.includes("{") ? pathValues.map((v) => template.replace(/\{[^}]+\}/g, encodeURIComponent(v))) : [template];
        for (const path of paths) {
          for (const query of queries) {
            const withBody = ["post", "put", "patch"].includes(method) ? bodies : [undefined];
            for (const body of withBody) {
              const authorization = path.startsWith("/admin") ? `Bearer ${E2E_ADMIN_TOKEN}` : `Bearer ${token}`;
              const res = await fetch(platform.baseUrl + path + query, {
                method: method.toUpperCase(),
                headers: { authorization, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
                body: body !== undefined ? JSON.stringify(body) : undefined,
              });
              calls++;
              const text = await res.text();
              if (res.status >= 500) failures.push(`${method.toUpperCase()} ${path}${query} ${JSON.stringify(body)?.slice(0, 80)} -> ${res.status} ${text.slice(0, 120)}`);
              if (res.status >= 400 && !/"statusCode"/.test(text)) failures.push(`${method.toUpperCase()} ${path}${query} -> ${res.status} not a GeneralResponse: ${text.slice(0, 80)}`);
              // A GeneralResponse's code is one of its status (a batch's 400 may be BatchResponses, which have none).
              const answer = res.status >= 400 && /"statusCode"/.test(text) ? JSON.parse(text) : undefined;
              if (answer && !Array.isArray(answer) && ERROR_CODES[answer.code as ErrorCode]?.status !== res.status) failures.push(`${method.toUpperCase()} ${path}${query} -> ${res.status} with code ${answer.code}`);
            }
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
  }, 300_000);

  const nested = (levels: number, leaf: unknown = 1): unknown => (levels === 0 ? leaf : { a: nested(levels - 1, leaf) });
  const nestedArray = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
  const surrogate = "\ud800";
  const overflow = [2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e309];
  /** Each hostile value alone, in the path, the query and the body of every operation. */
  const hostilePaths = ["%ED%A0%80", "%ED%B0%80x", "2147483648", "99999999999999999999999", "m".repeat(600), "%FF"];
  const hostileQueries = ["?page=2147483648", "?pageSize=2147483648", "?page=99999999999999999999", `?key=%ED%A0%80`, `?name=%ED%A0%80`, "?page=-2147483649"];
  const hostileBodies: string[] = [
    JSON.stringify(nested(60)),
    JSON.stringify([{ key: "k", externalAttributes: nested(60) }]),
    JSON.stringify({ key: "k", externalAttributes: nested(60) }),
    `{"payload":${'{"a":'.repeat(6000)}1${"}".repeat(6000)}}`,
    nestedArray(6000),
    JSON.stringify({ key: surrogate, name: surrogate, payload: surrogate, mappingType: "products", mappingValues: { [surrogate]: surrogate } }),
    JSON.stringify([{ key: `k${surrogate}`, id: surrogate, status: "completed", productName: surrogate }]),
    JSON.stringify({ key: "k", externalAttributes: { [surrogate]: 1 } }),
    ...overflow.map((n) => `{"key":"k","status":${n},"year":${n},"moq":${n},"page":${n},"sort":${n}}`),
    ...overflow.map((n) => `[{"key":"k","status":${n},"year":${n},"moq":${n},"id":${n}}]`),
  ];

  it("answers 4xx to depth, lone surrogates and integer overflow on every operation", async () => {
    const { token } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Hostile");
    const doc = (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const failures: string[] = [];
    let calls = 0;
    const call = async (method: string, path: string, body?: string) => {
      const authorization = path.startsWith("/admin") ? `Bearer ${E2E_ADMIN_TOKEN}` : `Bearer ${token}`;
      const res = await fetch(platform.baseUrl + path, {
        method: method.toUpperCase(),
        headers: { authorization, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body,
      });
      calls++;
      const text = await res.text();
      if (res.status >= 500) failures.push(`${method.toUpperCase()} ${path.slice(0, 100)} ${body?.slice(0, 80) ?? ""} -> ${res.status} ${text.slice(0, 120)}`);
      if (res.status >= 400 && !/"statusCode"/.test(text)) failures.push(`${method.toUpperCase()} ${path.slice(0, 100)} -> ${res.status} not a GeneralResponse: ${text.slice(0, 80)}`);
    };
    for (const [template, operations] of Object.entries<Record<string, unknown>>(doc.paths)) {
      const plain = template.replace(/\{[^}]+\}/g, "00000000-0000-0000-0000-000000000000");
      for (const method of Object.keys(operations)) {
        const writes = ["post", "put", "patch"].includes(method);
        const validBody = writes ? "{}" : undefined;
        if (template.includes("{")) for (const value of hostilePaths) await call(method, template.replace(/\{[^}]+\}/g, value), validBody);
        for (const query of hostileQueries) await call(method, plain + query, validBody);
        if (writes) for (const body of hostileBodies) await call(method, plain, body);
      }
    }
    expect(calls).toBeGreaterThan(300);
    expect(failures).toEqual([]);
  }, 300_000);

  it("answers 400 naming the field to an instant no proto Timestamp holds (year 0000, or past 9999 by its offset), and writes the batch's valid rows", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Instants");
    const traffic = await acme.api("POST", "/v2/api/storetrafficevents", [{ storeTrafficCounterID: "C1", eventTime: "0000-01-01T00:00:00Z", incomingTraffic: 1, outgoingTraffic: 0 }]);
    expect([traffic.status, JSON.stringify(traffic.body)]).toEqual([400, expect.stringContaining("eventTime")]);
    await acme.api("POST", "/v2/api/products", { key: "T1" });
    await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }]);
    const stock = await acme.api("POST", "/v2/api/warehouses/stock", [
      { key: "T1", externalWarehouseID: "W1", availableQuantity: 1, physicalQuantity: 1, date: "9999-12-31T23:59:59-01:00" },
      { key: "T1", externalWarehouseID: "W1", availableQuantity: 2, physicalQuantity: 2, date: "2026-01-01T00:00:00Z" },
    ]);
    expect(stock.body.map((r: { statusCode: number }) => r.statusCode)).toEqual([400, 200]);
    expect(stock.body[0].message).toContain("date");
  });
});
