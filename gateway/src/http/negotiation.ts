import { HttpError } from "./errors";

/** An Accept range's weight (RFC 9110 12.4.2: q from 0 to 1, three decimals; a bad one refuses). */
function weightOf(params: string[]): number {
  const q = params.find((p) => p.startsWith("q="));
  if (!q) return 1;
  return /^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$/.test(q.slice(2)) ? Number(q.slice(2)) : 0;
}

/**
 * The media type to answer with, of those a route `offers` (its first when Accept is absent): the
 * one Accept weighs most (RFC 9110 12.5.1: the most specific range that matches a type gives its
 * weight, so `text/csv;q=0` beside a wildcard refuses CSV alone; q=0 refuses), the earlier offered on a tie.
 * None acceptable is a 406 naming what the route offers.
 */
export function negotiated(accept: string | string[] | undefined, offers: readonly string[]): string {
  const header = Array.isArray(accept) ? accept.join(",") : (accept ?? "");
  if (!header.trim()) return offers[0];
  const ranges = header
    .split(",")
    .map((part) => {
      const [range, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
      const [type, subtype] = range.split("/");
      return { type, subtype, weight: weightOf(params) };
    })
    .filter((r) => r.type && r.subtype);
  let best: { offer: string; weight: number } | undefined;
  for (const offer of offers) {
    const [type, subtype] = offer.split("/");
    // The most specific matching range: type/subtype, then type/*, then */*.
    const match =
      ranges.find((r) => r.type === type && r.subtype === subtype) ?? ranges.find((r) => r.type === type && r.subtype === "*") ?? ranges.find((r) => r.type === "*" && r.subtype === "*");
    if (match && match.weight > 0 && (!best || match.weight > best.weight)) best = { offer, weight: match.weight };
  }
  if (best) return best.offer;
  throw new HttpError(406, `Accept: this answer is available as ${offers.join(" or ")}`, [{ path: "Accept", message: `must accept ${offers.join(" or ")}` }]);
}
