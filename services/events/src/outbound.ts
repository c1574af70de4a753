import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";

/**
 * Outbound calls to URLs an account chose (CONTRACT.md, "Webhooks"): only https:// and only to
 * public addresses, checked at connect time on every attempt (the name is resolved again for each
 * attempt, so a name that re-resolves to 127.0.0.1 or 169.254.169.254 after the endpoint was
 * registered fails then, and the attempt connects to the address it checked); a deadline on
 * connecting and on the whole exchange; at most 64 KiB of an answer read; redirects never
 * followed (a 3xx is a failed attempt). Names are resolved by c-ares (dns.promises.Resolver), not
 * dns.lookup: getaddrinfo runs on libuv's pool of 4 threads, so a few names whose servers do not
 * answer would hold every thread past the attempt's deadline and delay every other endpoint.
 */

const BLOCKED_V4: [string, number][] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];
const BLOCKED_V6: [string, number][] = [
  ["::", 96], // unspecified (::), loopback (::1), IPv4-compatible (::7f00:1 is 127.0.0.1)
  ["::ffff:0:0:0", 96], // IPv4-translated (SIIT): reaches the IPv4 address it carries through a translator
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001::", 32], // Teredo: tunnels to an IPv4 address
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: tunnels to the IPv4 address it carries
  ["fc00::", 7], // unique local (AWS's metadata fd00:ec2::254)
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];
const blocked = new net.BlockList();
for (const [a, p] of BLOCKED_V4) blocked.addSubnet(a, p, "ipv4");
for (const [a, p] of BLOCKED_V6) blocked.addSubnet(a, p, "ipv6");

/** True for an address the platform may call: not loopback, private, link-local, multicast, metadata or reserved. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !blocked.check(address, "ipv4");
  if (family !== 6) return false;
  const h = hextets(address);
  const embedded = () => isPublicAddress(`${h[6] >> 8}.${h[6] & 255}.${h[7] >> 8}.${h[7] & 255}`);
  // IPv4-mapped (::ffff:0:0/96, either spelling): judged by the IPv4 address it carries.
  if (h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff) return embedded();
  // NAT64's well-known prefix (64:ff9b::/96): what DNS64 answers for an IPv4-only name on an
  // IPv6-only network; the gateway reaches the IPv4 address it carries, so that address is judged.
  if (h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every((x) => x === 0)) return embedded();
  return !blocked.check(address, "ipv6");
}

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad, "::" expanded). */
function hextets(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const [head, tail] = text.split("::");
  const before = groups(head);
  const after = groups(tail);
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/** A URL's host without the brackets of an IPv6 literal. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/** localhost and *.localhost, a trailing dot or not: loopback by definition (RFC 6761), never asked of DNS. */
const isLocalhostName = (host: string) => {
  const name = host.toLowerCase().replace(/\.+$/, "");
  return name === "localhost" || name.endsWith(".localhost");
};

/** Why a URL may not be registered, or undefined. Names are judged at connect time, literals and localhost now. */
export function urlProblem(raw: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) return "must be an https:// URL";
  if (url.username || url.password) return "must not carry credentials";
  if (allowPrivate) return undefined;
  const host = hostOf(url);
  if (isLocalhostName(host)) return "must be a public address";
  if (net.isIP(host) && !isPublicAddress(host)) return "must be a public address";
  return undefined;
}

/** Every address a name resolves to (an error with a DNS code when it cannot be resolved). */
export type Resolve = (hostname: string) => Promise<dns.LookupAddress[]>;

/**
 * c-ares' wait for a server's answer to a query, then its tries (each waits longer than the one
 * before: about 1 + 2 s), within the 5 s an attempt has to connect. c-ares runs on the event
 * loop, no thread held, so a name whose server never answers costs only its own attempt.
 */
export const DNS_TIMEOUT_MS = 1_000;
export const DNS_TRIES = 2;

/**
 * A Resolve by c-ares: the A and AAAA records of a name (IPv4 first), from the system's name
 * servers (/etc/resolv.conf) or `servers`. Every address of both families is returned to be
 * checked, so an error of either (but "no such record") fails the resolution: an address not seen
 * cannot be checked. /etc/hosts is not read, except that localhost names are loopback.
 */
export function cAresResolve(o: { servers?: string[]; timeoutMs?: number; tries?: number } = {}): Resolve {
  const resolver = new dns.promises.Resolver({ timeout: o.timeoutMs ?? DNS_TIMEOUT_MS, tries: o.tries ?? DNS_TRIES });
  if (o.servers) resolver.setServers(o.servers);
  const records = (query: Promise<string[]>) =>
    query.catch((err: NodeJS.ErrnoException) => {
      if (err.code === dns.NODATA || err.code === dns.NOTFOUND) return [];
      throw err;
    });
  return async (hostname) => {
    if (isLocalhostName(hostname)) return [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }];
    const [v4, v6] = await Promise.all([records(resolver.resolve4(hostname)), records(resolver.resolve6(hostname))]);
    return [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
  };
}

/** The system's name servers, by c-ares (made on first use). */
let systemResolve: Resolve | undefined;

export interface OutboundOptions {
  allowPrivate: boolean;
  /** Connecting: resolving the name, the TCP connection and the TLS handshake (a kept-alive connection is connected). */
  connectTimeoutMs: number;
  /** The whole exchange: connecting, sending, the answer's headers and body. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** Name resolution (tests inject one); c-ares on the system's name servers by default (cAresResolve). */
  resolve?: Resolve;
  /** Which addresses an attempt may connect to: public ones (any with allowPrivate) by default; tests stand loopback in for public. */
  allowAddress?: (address: string) => boolean;
}

export interface OutboundResult {
  /** The answer's status, when one came. */
  statusCode?: number;
  /** Why no answer came (refused address, timeout, connection error). */
  error?: string;
  durationMs: number;
}

/** The address an attempt connects to: this attempt's resolution of the host, every answer allowed. */
interface CheckedAddress {
  address: string;
  family: number;
}

/** Resolves `host` (a literal is its own answer) and refuses it if any answer is not allowed; the first answer is the one used. */
async function checkedAddress(host: string, options: OutboundOptions): Promise<CheckedAddress | { refused: string }> {
  const allowed = options.allowAddress ?? ((a: string) => options.allowPrivate || isPublicAddress(a));
  let addresses: dns.LookupAddress[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await (options.resolve ?? (systemResolve ??= cAresResolve()))(host);
    } catch (err) {
      return { refused: `${host} not resolved (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
    }
    if (!addresses.length) return { refused: `${host} not resolved (no address)` };
  }
  const refused = addresses.find((a) => !allowed(a.address));
  if (refused) return { refused: `${host} resolves to ${refused.address}, not a public address` };
  return addresses[0];
}

/**
 * Kept-alive connections, one pool per origin and checked address: a connection is reused only by
 * an attempt whose own resolution, checked, chose the address it is connected to. So every attempt
 * is still checked (a name re-resolving to 127.0.0.1 or 169.254.169.254 fails the attempt though a
 * connection to its old address is open), and a busy endpoint is not one TCP and TLS handshake per
 * attempt. Idle connections close after IDLE_MS (before the 5 s of common servers' keep-alive).
 */
const pools = new Map<string, http.Agent>();
const IDLE_MS = 4_000;

function poolFor(url: URL, to: CheckedAddress): http.Agent {
  const key = `${url.origin} ${to.address}`;
  let pool = pools.get(key);
  if (!pool) {
    forgetIdlePools();
    pool = new (url.protocol === "https:" ? https.Agent : http.Agent)({ keepAlive: true, timeout: IDLE_MS });
    pools.set(key, pool);
  }
  return pool;
}

const count = (sockets: NodeJS.ReadOnlyDict<unknown[]>) => Object.values(sockets).reduce((n, s) => n + (s?.length ?? 0), 0);

/** Pools left with no connection (their addresses no longer resolved to, or their endpoints quiet) are dropped. */
function forgetIdlePools(): void {
  for (const [key, pool] of pools) {
    if (count(pool.sockets) + count(pool.freeSockets) + count(pool.requests) === 0) {
      pool.destroy();
      pools.delete(key);
    }
  }
}

/** Closes the kept-alive connections not in use (a worker stopping; another worker of the process keeps those it is using). */
export function closeIdleConnections(): void {
  for (const pool of pools.values()) for (const sockets of Object.values(pool.freeSockets)) sockets?.forEach((socket) => socket.destroy());
}

/**
 * POSTs `body` to `url` under the rules above; never throws. Every attempt resolves and checks the
 * name, then sends on a kept-alive connection to that address or a new one. A kept-alive
 * connection the receiver closed meanwhile fails before any answer: sent once more on a new one
 * (a receiver de-duplicates on webhook-id if it did get the first).
 */
export async function postSafely(rawUrl: string, headers: Record<string, string>, body: string, options: OutboundOptions): Promise<OutboundResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const problem = urlProblem(rawUrl, options.allowPrivate);
  if (problem) return { error: `url ${problem}`, durationMs: took() };
  const url = new URL(rawUrl);
  let resolving: NodeJS.Timeout | undefined;
  // c-ares gives up by itself (DNS_TIMEOUT_MS, DNS_TRIES); this bounds an injected resolver too.
  const to = await Promise.race([
    checkedAddress(hostOf(url), options),
    new Promise<{ refused: string }>((resolve) => (resolving = setTimeout(() => resolve({ refused: `${hostOf(url)} not resolved within ${options.connectTimeoutMs} ms` }), options.connectTimeoutMs))),
  ]).finally(() => clearTimeout(resolving));
  if ("refused" in to) return { error: to.refused, durationMs: took() };
  const deadline = started + options.timeoutMs;
  // The connect deadline counts from the attempt's start: resolving the name is part of connecting.
  const connectBy = started + options.connectTimeoutMs;
  let result = await exchange(url, headers, body, to, poolFor(url, to), deadline, connectBy, options);
  if (result.stale) result = await exchange(url, headers, body, to, false, deadline, performance.now() + options.connectTimeoutMs, options);
  return { statusCode: result.statusCode, error: result.error, durationMs: took() };
}

/**
 * One request to the checked address, on a connection of `pool` (false: a new one of its own).
 * `stale`: it failed on a kept-alive connection before any answer.
 */
function exchange(
  url: URL,
  headers: Record<string, string>,
  body: string,
  to: CheckedAddress,
  pool: http.Agent | false,
  deadline: number,
  connectBy: number,
  options: OutboundOptions,
): Promise<{ statusCode?: number; error?: string; stale?: boolean }> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: { statusCode?: number; error?: string; stale?: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(whole);
      clearTimeout(connecting);
      resolve(r);
    };
    let connecting: NodeJS.Timeout | undefined;
    const whole = setTimeout(() => {
      done({ error: `no answer within ${options.timeoutMs} ms` });
      req.destroy();
    }, Math.max(0, deadline - performance.now()));
    const host = hostOf(url);
    const req = (url.protocol === "https:" ? https : http).request(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      agent: pool,
      // Connects to the address checked above, whatever the name resolves to now; TLS still checks the certificate against the name.
      lookup: ((_hostname: string, lookupOptions: dns.LookupOptions, callback: (...args: unknown[]) => void) =>
        lookupOptions.all ? callback(null, [to]) : callback(null, to.address, to.family)) as unknown as net.LookupFunction,
      servername: net.isIP(host) ? undefined : host,
    });
    req.once("socket", (socket) => {
      if (req.reusedSocket) return;
      connecting = setTimeout(() => {
        done({ error: `not connected within ${options.connectTimeoutMs} ms` });
        req.destroy();
      }, Math.max(0, connectBy - performance.now()));
      socket.once(url.protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connecting));
    });
    let answered = false;
    req.once("error", (err: NodeJS.ErrnoException) => done({ error: `${err.code ?? "error"}: ${err.message}`, stale: req.reusedSocket && !answered }));
    req.once("response", (res) => {
      answered = true;
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        // Enough: the status decides; a receiver streaming more is cut off (and its connection closed).
        if (read >= options.maxResponseBytes) {
          done({ statusCode: res.statusCode });
          res.destroy();
        }
      });
      res.once("end", () => done({ statusCode: res.statusCode }));
      res.once("error", () => done({ statusCode: res.statusCode }));
      res.once("close", () => done({ statusCode: res.statusCode }));
    });
    req.end(body);
  });
}
