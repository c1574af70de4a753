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
  /**
   * How long a call waits for the first byte of its answer before its replica is asked (an HTTP/2
   * PING) whether it still answers; a PING unanswered as long again takes the replica out of the
   * rotation (a frozen process), and it is probed in the background until it answers.
   */
  firstByteTimeoutMs?: number;
}

/** A replica that has not accepted the connection in this long is taken for gone. */
const CONNECT_TIMEOUT_MS = 1_000;
// A PING costs a live replica nothing however busy its handlers are, so the wait before one is
// short: a frozen replica leaves the rotation about a second after it froze (this, then as long
// again without the PING's answer).
const FIRST_BYTE_TIMEOUT_MS = 500;

/** One replica of a service: an address and the HTTP/2 session to it. */
export class Replica {
  readonly sessions: Http2SessionManager;
  /** Calls opening or open on it: a retired replica's session closes when none is left. */
  private inFlight = 0;
  private retired = false;
  /** A connection attempt after a failure is under way: calls go elsewhere meanwhile. */
  probing = false;
  /** It answered no PING in time (a frozen process): out of the rotation until a probe is answered. */
  ejected = false;
  private checking = false;
  private readonly connect: () => net.Socket;

  constructor(
    private readonly baseUrl: string,
    readonly address: string,
    port: number,
    connectTimeoutMs = CONNECT_TIMEOUT_MS,
    private readonly firstByteTimeoutMs = FIRST_BYTE_TIMEOUT_MS,
    /** Called when it leaves the rotation as frozen: the service's name may list a replica not known yet. */
    private readonly onEjected: () => void = () => undefined,
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
    this.connect = connect;
    this.sessions = new Http2SessionManager(baseUrl, undefined, { createConnection: connect });
  }

  /** Its last connection attempt failed, or one is being tried again, or it stopped answering. */
  get broken(): boolean {
    return this.probing || this.ejected || this.sessions.state() === "error";
  }

  async request(path: string, headers: http2.OutgoingHttpHeaders): Promise<http2.ClientHttp2Stream> {
    // Counted while still opening: retire() must not abort the session under a call being opened on it.
    this.inFlight++;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = await this.sessions.request("POST", path, headers, {});
    } catch (error) {
      this.release();
      throw error;
    }
    listenForErrors(stream.session);
    // No first byte in time: is the replica still there?
    const timer = setTimeout(() => this.check(stream.session), this.firstByteTimeoutMs);
    stream.once("response", () => clearTimeout(timer));
    stream.once("close", () => {
      clearTimeout(timer);
      this.release();
    });
    return stream;
  }

  private release(): void {
    this.inFlight--;
    if (this.retired && this.inFlight === 0) this.sessions.abort();
  }

  /**
   * A call waits long for its answer: a slow handler, or a process that stopped (SIGSTOP, a node
   * frozen). A live process answers a PING at once whatever its handlers do; one that does not is
   * taken out of the rotation. Its calls in flight keep their deadline (it may yet answer them).
   */
  private check(session: http2.Http2Session | undefined): void {
    if (this.checking || this.ejected || this.retired || !session) return;
    this.checking = true;
    void answersPing(session, this.firstByteTimeoutMs).then((alive) => {
      this.checking = false;
      if (!alive && !session.destroyed && !session.closed) this.eject();
    });
  }

  /** Out of the rotation; probed (a new connection and a PING) every firstByteTimeoutMs until it answers. */
  private eject(): void {
    this.ejected = true;
    this.onEjected();
    const probe = () => {
      if (this.retired) return;
      void this.answersProbe().then((alive) => {
        if (alive) this.ejected = false;
        else setTimeout(probe, this.firstByteTimeoutMs).unref();
      });
    };
    setTimeout(probe, this.firstByteTimeoutMs).unref();
  }

  private answersProbe(): Promise<boolean> {
    return new Promise((resolve) => {
      const session = http2.connect(this.baseUrl, { createConnection: this.connect });
      const done = (alive: boolean) => {
        session.destroy();
        resolve(alive);
      };
      session.once("error", () => done(false));
      session.once("connect", () => void answersPing(session, this.firstByteTimeoutMs).then(done));
    });
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

const heard = new WeakSet<http2.Http2Session>();

/**
 * connect-node's session manager destroys an idle session that receives GOAWAY (a replica closing)
 * with an error, and when a call is opened before that error is emitted it stops listening for
 * it: unheard, the error would end the process. The session is given up all the same.
 */
function listenForErrors(session: http2.Http2Session | undefined): void {
  if (!session || heard.has(session)) return;
  heard.add(session);
  session.on("error", () => undefined);
}

/** True when `session` answers a PING within `ms`. */
function answersPing(session: http2.Http2Session, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const answered = (alive: boolean) => {
      clearTimeout(timer);
      resolve(alive);
    };
    try {
      if (!session.ping((error) => answered(!error))) answered(false);
    } catch {
      answered(false);
    }
  });
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
  private refreshing: Promise<void> | undefined;
  private readonly hostnameIsAddress: boolean;
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
    this.hostnameIsAddress = net.isIP(this.hostname) !== 0;
    if (this.hostnameIsAddress) this.replicas = [this.replica(this.hostname)];
  }

  /**
   * The next replica in turn, skipping broken ones and `other` while another is left (`other`
   * when it is the only one); the
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
    return fallback ?? (other && replicas.includes(other) ? other : undefined);
  }

  /**
   * A replica at `address`. One found frozen makes the name resolved again at once, as a failed
   * connection does: a pod that replaced another (a rolling update) may be listed and not known yet,
   * and without it calls would wait on the frozen one, the only one left.
   */
  private replica(address: string): Replica {
    return new Replica(this.baseUrl, address, this.port, this.options.connectTimeoutMs, this.options.firstByteTimeoutMs, () => void this.resolveAgain());
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

  /**
   * A replica could not be connected to or refused a call: the name is resolved again at once (a
   * pod that restarted has a new address), not at the next refresh; callers meanwhile share the
   * lookup under way. Never throws.
   */
  async resolveAgain(): Promise<void> {
    if (!this.hostnameIsAddress) await this.refresh().catch(() => undefined);
  }

  /** A failed lookup keeps the replicas known (the next one may succeed); only the first call reports it. */
  private refresh(): Promise<void> {
    return (this.refreshing ??= this.lookupAndApply().finally(() => (this.refreshing = undefined)));
  }

  private async lookupAndApply(): Promise<void> {
    const addresses = [...new Set(await this.lookup(this.hostname))];
    if (addresses.length === 0) return;
    const kept = this.replicas.filter((r) => addresses.includes(r.address));
    for (const replica of this.replicas) if (!kept.includes(replica)) replica.retire();
    for (const address of addresses) if (!kept.some((r) => r.address === address)) kept.push(this.replica(address));
    for (const replica of kept) if (replica.sessions.state() === "error") replica.probe();
    this.replicas = kept;
  }
}
