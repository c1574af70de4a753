import type { FastifyReply, FastifyRequest } from "fastify";
import { wholeNumber } from "./values";

/** `page` and `pageSize` of every paged list; out of range is a 400, never clamped. */
export function pageQuery(maxPageSize = 1000) {
  return {
    // At most 2^31 - 1: the services' page number is an int32.
    page: wholeNumber(1, 2_147_483_647).default(1).describe("1-based page number"),
    pageSize: wholeNumber(1, maxPageSize).default(10).describe(`page size, at most ${maxPageSize}`),
  };
}

export const pageHeaders = {
  "X-Total-Count": { description: "number of items across all pages", schema: { type: "integer" } },
  Link: {
    description: "RFC 8288 links to the `next` page (when there is one), the `prev` page (from page 2 on), and the `first` and `last` pages (always; the last page is page 1 when the list is empty), each keeping the request's other parameters",
    schema: { type: "string" },
  },
};

/** Sets X-Total-Count and the RFC 8288 Link header: next, prev, first, last (relative URLs keeping every other parameter). */
export function setPageHeaders(request: FastifyRequest, reply: FastifyReply, page: { page: number; pageSize: number }, total: number): void {
  reply.header("X-Total-Count", String(total));
  const [path, search = ""] = request.url.split("?");
  const link = (n: number, rel: string) => {
    const params = new URLSearchParams(search);
    params.set("page", String(n));
    params.set("pageSize", String(page.pageSize));
    return `<${path}?${params.toString()}>; rel="${rel}"`;
  };
  const last = Math.max(1, Math.ceil(total / page.pageSize));
  const links: string[] = [];
  if (page.page * page.pageSize < total) links.push(link(page.page + 1, "next"));
  if (page.page > 1) links.push(link(Math.min(page.page - 1, last), "prev"));
  // The total is known, so the ends are too: a client can jump to them (RFC 8288 first/last).
  links.push(link(1, "first"), link(last, "last"));
  reply.header("Link", links.join(", "));
}

/**
 * The RFC 8288 link to the page after a page that ends at `after` (a key-set page: planning's
 * groups): the request's path and parameters, `after` set to it (encoded), as a relative URL.
 */
export function afterLink(request: FastifyRequest, after: string, rel = "next"): string {
  const [path, search = ""] = request.url.split("?");
  const params = new URLSearchParams(search);
  params.set("after", after);
  return `<${path}?${params.toString()}>; rel="${rel}"`;
}

/** Adds a link to the answer's Link header, after those it has (a deprecated route's successor-version). */
export function addLink(reply: FastifyReply, link: string): void {
  const given = reply.getHeader("Link");
  reply.header("Link", given ? `${String(given)}, ${link}` : link);
}
