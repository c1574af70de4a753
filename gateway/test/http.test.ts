import pino from "pino";
import { testGateway } from "./document";

type Harness = Awaited<ReturnType<typeof testGateway>>;

describe("HTTP behaviour of the edge", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await testGateway();
  });
  afterAll(async () => {
    await h.close();
  });

  it("answers a wrong method on a known path with 405, Allow and a GeneralResponse (item 10)", async () => {
    const res = await h.gw.app.inject({ method: "DELETE", url: "/v2/api/products?x=1" });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD, POST, PUT");
    expect(res.json()).toMatchObject({ statusCode: 405, error: "Method Not Allowed", message: expect.stringContaining("DELETE") });
    const param = await h.gw.app.inject({ method: "POST", url: "/v2/api/events/some-id" });
    expect(param.statusCode).toBe(405);
    expect(param.headers.allow).toBe("PUT");
    const unknown = await h.gw.app.inject({ method: "GET", url: "/v2/api/nothing-here" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.allow).toBeUndefined();
  });
});


describe("request ids (item 7)", () => {
  const lines: Record<string, unknown>[] = [];
  let h: Harness;
  beforeAll(async () => {
    const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    h = await testGateway({ logger });
  });
  afterAll(async () => {
    await h.close();
  });

  it("answers X-Request-Id, the client's when sane, else a UUID, and logs every line of the request with it", async () => {
    const own = await h.gw.app.inject({ method: "GET", url: "/v2/api/products", headers: { "x-request-id": "client-req-42" } });
    expect(own.statusCode).toBe(401);
    expect(own.headers["x-request-id"]).toBe("client-req-42");
    expect(lines.filter((l) => l.requestId === "client-req-42").map((l) => l.msg)).toContain("request");
    const generated = await h.gw.app.inject({ method: "GET", url: "/healthz" });
    expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const insane = await h.gw.app.inject({ method: "GET", url: "/healthz", headers: { "x-request-id": "a b<script>" + "x".repeat(200) } });
    expect(insane.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    const missing = await h.gw.app.inject({ method: "POST", url: "/v2/api/nothing" });
    expect(missing.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});
