import dns from "node:dns";
import http2 from "node:http2";
import net from "node:net";
import { Http2SessionManager } from "@connectrpc/connect-node";

export interface ReplicaOptions {
  /** Every address the service's host name resolves to (tests inject one); default: the system resolver. */
  lookup?: (hostname: string) => Promise<string[]>;
  /** How often the host name is resolved again, so new replicas get calls and gone ones are let go. */
  refreshMs?: number;
  /** How long a connection to a replica may take (a dead node answers no SYN): then it is broken. */
  connectTimeoutMs?: number;
}

/** A replica that has not accepted the connection in this long is taken for gone. */
const CONNECT_TIMEOUT_MS = 3_000;

/** One replica of a service: an address and the HTTP/2 session to it. */
export class Replica {
  readonly sessions: Http2SessionManager;
  private inFlight = 0;
  private retired = false;
  /** A connection attempt after a failure is under way: calls go elsewhere meanwhile. */
  probing = false;

  constructor(
    baseUrl: string,
    readonly address: string,
    port: number,
    connectTimeoutMs = CONNECT_TIMEOUT_MS,
  ) {
    // The session's authority stays the service's URL; only the socket goes to this address. A
    // connection that hangs (a dead node answers no SYN) fails after connectTimeoutMs as ETIMEDOUT:
    // the session is broken, so calls go to other replicas, and the call that met it, having
    // sent nothing, is sent to another one.
    const connect = () => {
      const socket = net.connect({ host: address, port });
      socket.setTimeout(connectTimeoutMs, () => socket.destroy(Object.assign(new Error(`connecting to ${address}:${port} timed out`), { code: "ETIMEDOUT" })));
      socket.once("connect", () => socket.setTimeout(0));
      return socket;
    };
    this.sessions = new Http2SessionManager(baseUrl, undefined, { createConnection: connect });
  }

  /** Its last connection attempt failed, or one is being tried again. */
  get broken(): boolean {
    return this.probing || this.sessions.state() === "error";
  }

  async request(path: string, headers: http2.OutgoingHttpHeaders): Promise<http2.ClientHttp2Stream> {
    const stream = await this.sessions.request("POST", path, headers, {});
    this.inFlight++;
    stream.once("close", () => {
      this.inFlight--;
      if (this.retired && this.inFlight === 0) this.sessions.abort();
    });
    return stream;
  }

  /** Gone from the service's addresses: its session closes once its calls have ended. */
  retire(): void {
    this.retired = true;
    if (this.inFlight === 0) this.sessions.abort();
  }

  probe(): void {
    this.probing = true;
    void this.sessions.connect().finally(() => (this.probing = false));
  }
}

const systemLookup = async (hostname: string) => (await dns.promises.lookup(hostname, { all: true })).map((a) => a.address);

/**
 * The replicas of one service: every address its host name resolves to (a headless Service gives
 * each pod's), one HTTP/2 session each, calls spread round-robin over those not known broken.
 * The name is resolved again every `refreshMs`: new addresses join, gone ones are retired, and
 * broken ones still listed are tried again. An IP address in the URL is one replica for good.
 */
export class Replicas {
  private replicas: Replica[] = [];
  private turn = 0;
  private resolving: Promise<void> | undefined;
  private refreshing = false;
  private readonly hostname: string;
  private readonly port: number;
  private readonly lookup: (hostname: string) => Promise<string[]>;

  constructor(
    private readonly baseUrl: string,
    private readonly options: ReplicaOptions = {},
  ) {
    const url = new URL(baseUrl);
    this.hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    this.port = Number(url.port || 80);
    this.lookup = options.lookup ?? systemLookup;
    if (net.isIP(this.hostname)) this.replicas = [new Replica(baseUrl, this.hostname, this.port, options.connectTimeoutMs)];
  }

  /**
   * The next replica in turn, skipping broken ones and `other` while another is left; the
   * host name is resolved on first use (a failure is the caller's, and the next call tries again).
   */
  async pick(other?: Replica): Promise<Replica | undefined> {
    if (this.replicas.length === 0) await (this.resolving ??= this.resolveFirst());
    const { replicas } = this;
    let fallback: Replica | undefined;
    for (let i = 0; i < replicas.length; i++) {
      const at = (this.turn + i) % replicas.length;
      const replica = replicas[at];
      if (replica === other) continue;
      if (replica.broken) {
        fallback ??= replica;
        continue;
      }
      this.turn = at + 1;
      return replica;
    }
    return fallback;
  }

  private async resolveFirst(): Promise<void> {
    try {
      await this.refresh();
      if (this.replicas.length === 0) throw Object.assign(new Error(`${this.hostname} resolved to no address`), { code: "ENOTFOUND" });
      const timer = setInterval(() => void this.refresh().catch(() => undefined), this.options.refreshMs ?? 10_000);
      timer.unref();
    } finally {
      this.resolving = undefined;
    }
  }

  /** A failed lookup keeps the replicas known (the next one may succeed); only the first call reports it. */
  private async refresh(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const addresses = [...new Set(await this.lookup(this.hostname))];
      if (addresses.length === 0) return;
      const kept = this.replicas.filter((r) => addresses.includes(r.address));
      for (const replica of this.replicas) if (!kept.includes(replica)) replica.retire();
      for (const address of addresses) if (!kept.some((r) => r.address === address)) kept.push(new Replica(this.baseUrl, address, this.port, this.options.connectTimeoutMs));
      for (const replica of kept) if (replica.sessions.state() === "error") replica.probe();
      this.replicas = kept;
    } finally {
      this.refreshing = false;
    }
  }
}
