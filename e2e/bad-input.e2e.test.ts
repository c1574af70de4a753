import { E2E_ADMIN_TOKEN, signUp, startOnTestServices, type PlatformOnTestServices } from "./harness";

/**
 * "400 with the field that is wrong, never a 500": every operation of the OpenAPI document gets
 * malformed paths, queries and bodies, and must answer a 4xx GeneralResponse.
 */
describe("bad input never gives a 500", () => {
  let platform: PlatformOnTestServices;
  beforeAll(async () => {
    platform = await startOnTestServices();
  });
  afterAll(async () => {
    await platform?.close();
  });

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
            }
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(1000);
    expect(failures).toEqual([]);
  }, 300_000);
});
