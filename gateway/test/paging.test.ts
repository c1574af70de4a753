import Fastify from "fastify";
import { setPageHeaders } from "../src/http/paging";

/** The Link header a paged list answers for `url` over `total` items, through a real Fastify reply. */
async function linksOf(url: string, total: number): Promise<Record<string, string>> {
  const app = Fastify();
  app.get("/v2/api/things", async (request, reply) => {
    const query = request.query as { page?: string; pageSize?: string };
    setPageHeaders(request, reply, { page: Number(query.page ?? 1), pageSize: Number(query.pageSize ?? 10) }, total);
    return [];
  });
  const res = await app.inject({ method: "GET", url });
  await app.close();
  expect(res.headers["x-total-count"]).toBe(String(total));
  return Object.fromEntries(String(res.headers.link).split(", ").map((l) => [/rel="(\w+)"/.exec(l)![1], /^<([^>]+)>/.exec(l)![1]]));
}

describe("the Link header of a paged list (RFC 8288)", () => {
  it("links next, prev, first and last, keeping the other parameters", async () => {
    expect(await linksOf("/v2/api/things?page=2&pageSize=10&status=open", 35)).toEqual({
      next: "/v2/api/things?page=3&pageSize=10&status=open",
      prev: "/v2/api/things?page=1&pageSize=10&status=open",
      first: "/v2/api/things?page=1&pageSize=10&status=open",
      last: "/v2/api/things?page=4&pageSize=10&status=open",
    });
  });

  it("on the first page has no prev, on the last no next; first and last are always there", async () => {
    expect(await linksOf("/v2/api/things?pageSize=10", 20)).toEqual({
      next: "/v2/api/things?pageSize=10&page=2",
      first: "/v2/api/things?pageSize=10&page=1",
      last: "/v2/api/things?pageSize=10&page=2",
    });
    expect(await linksOf("/v2/api/things?page=2&pageSize=10", 20)).toEqual({
      prev: "/v2/api/things?page=1&pageSize=10",
      first: "/v2/api/things?page=1&pageSize=10",
      last: "/v2/api/things?page=2&pageSize=10",
    });
  });

  it("an empty list's last page is page 1, and a page past the end goes back to it", async () => {
    expect(await linksOf("/v2/api/things", 0)).toEqual({ first: "/v2/api/things?page=1&pageSize=10", last: "/v2/api/things?page=1&pageSize=10" });
    expect(await linksOf("/v2/api/things?page=9&pageSize=10", 15)).toEqual({
      prev: "/v2/api/things?page=2&pageSize=10",
      first: "/v2/api/things?page=1&pageSize=10",
      last: "/v2/api/things?page=2&pageSize=10",
    });
  });
});
