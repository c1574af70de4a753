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

