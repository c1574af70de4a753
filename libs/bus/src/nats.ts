import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from "@nats-io/jetstream";
import type { Logger } from "pino";
import { asError, handleIsolating, retryDelayMs, type Bus, type BusMessage, type ConsumerSpec, type PublishOutcome, type Subscription } from "./types";

export interface NatsBusOptions {
  /** A server's URL, or a comma-separated list of a cluster's. */
  url: string;
  /** Stream holding every `analytics.>` subject. */
  stream: string;
  /** Prepended to every subject on the wire (tests and shared servers); stripped on receipt. */
  subjectPrefix?: string;
  /** How long the stream keeps messages (default 7 days): the horizon of a replica rebuild. */
  maxAgeSeconds?: number;
  /** Most bytes the stream keeps, the oldest messages dropped beyond it (default -1: no limit but the age). */
  maxBytes?: number;
  /** Copies of the stream JetStream keeps across a cluster's servers (1 on a single server). */
  replicas?: number;
  /** Ack wait of the durable consumers (default ACK_WAIT_MS; tests shorten it). */
  ackWaitMs?: number;
  /** Partitions of every subject (default DEFAULT_PARTITIONS): an account's messages travel on one of them. */
  partitions?: number;
  logger?: Logger;
  name?: string;
}

const NS = 1_000_000_000;
/** Nats-Msg-Id de-duplication: a relay that publishes a row twice within this window stores it once. */
export const DUPLICATE_WINDOW_SECONDS = 10 * 60;
export const DEFAULT_MAX_AGE_SECONDS = 7 * 24 * 3600;
/** NATS's default max_payload; the outbox refuses larger messages at write time. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
/**
 * How long a delivered message may go unacknowledged before JetStream hands it out again: the
 * delay with which the batch of a consumer that died is redelivered. Messages a consumer holds
 * (waiting for their batch or being handled) are marked in progress every ACK_WAIT / 4, so a
 * slow batch is not handed out twice. Not shorter: marks sent while a consumer has no leader are
 * lost, and nats-server waits 4-9 s before electing one after its server was lost, so the ack
 * wait outlasts an election and a mark. (A leader change does not wait for it: see PULL_HEARTBEAT_MS.)
 */
export const ACK_WAIT_MS = 20_000;
/**
 * A pull's heartbeat: JetStream sends one this often while a pull waits with nothing to deliver,
 * and two missed in a row make the consumer pull again. A pull lives on its consumer's leader
 * only, so one waiting when the leader changed (stepped down, its server lost) is gone without a
 * word: it is noticed after 2-3 heartbeats, not after the pull's expiry. At 1 s a write was
 * visible in planning again 4.1 s after a consumer's leader stepped down on the cluster run; at
 * 0.5 s a consumer resumed 1.3-1.5 s after one (3 servers, no other load).
 */
export const PULL_HEARTBEAT_MS = 500;
/** How long a pull waits for messages before the next replaces it. */
export const PULL_EXPIRES_MS = 5_000;
/** Unacknowledged messages a consumer may hold: bounds memory and the size of its batches. */
const MAX_ACK_PENDING = 1024;
/** Deliveries of one message before it is given up on (logged as dead-lettered, then terminated). */
export const MAX_DELIVER = 20;
/**
 * Partitions of every subject. A message travels on `<subject>.p<N>`, N = partitionOf(its
 * account), and each consumer reads every partition through a durable consumer of its own: one
 * account's backlog (a bulk load of 100,000 products) holds back only the accounts of its
 * partition, not everyone's. An aggregate belongs to one account, so its messages stay in one
 * partition, in stream order.
 */
export const DEFAULT_PARTITIONS = 8;

/** The partition of an account's messages: FNV-1a of its id, modulo the partitions. */
export function partitionOf(accountId: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) hash = Math.imul(hash ^ accountId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % partitions;
}

/** `analytics.catalogue.sku.created.p3` -> `analytics.catalogue.sku.created`. */
const withoutPartition = (subject: string) => subject.replace(/\.p\d+$/, "");

/**
 * JetStream adapter: one stream with explicit limits, a durable pull consumer per (consumer,
 * subject, partition) with explicit acks; publishes carry Nats-Msg-Id so a relay that publishes twice
 * stores once, and many PubAcks are awaited at once.
 */
export class NatsBus implements Bus {
  readonly kind = "nats" as const;
  private readonly running = new Set<ConsumerMessages>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly options: NatsBusOptions,
  ) {}

  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    // noAsyncTraces: otherwise every request (each JetStream publish is one) captures a stack
    // trace up front in case it times out: two Error objects per relayed outbox row. The price: a
    // request's timeout error no longer shows its caller's stack (the relay logs the row).
    const nc = await connect({ servers: options.url.split(",").map((u) => u.trim()), name: options.name, maxReconnectAttempts: -1, noAsyncTraces: true });
    const jsm = await jetstreamManager(nc);
    const prefix = options.subjectPrefix ?? "";
    const limits = {
      subjects: [`${prefix}analytics.>`],
      max_age: (options.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS) * NS,
      max_bytes: options.maxBytes ?? -1,
      duplicate_window: DUPLICATE_WINDOW_SECONDS * NS,
      max_msg_size: MAX_MESSAGE_BYTES,
      num_replicas: options.replicas ?? 1,
    };
    // Whichever process starts first creates the stream; a later one brings an existing stream
    // to the configured limits and replicas (an R1 stream made before becomes R3), and leaves it
    // alone when it has them: replicas starting together do not each ask the cluster for a change.
    await whileJetStreamUnavailable(async () => {
      try {
        const { config } = await jsm.streams.info(options.stream);
        const current = { subjects: config.subjects, max_age: config.max_age, max_bytes: config.max_bytes, duplicate_window: config.duplicate_window, max_msg_size: config.max_msg_size, num_replicas: config.num_replicas };
        if (JSON.stringify(current) !== JSON.stringify(limits)) await jsm.streams.update(options.stream, limits);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await jsm.streams.add({ name: options.stream, ...limits });
      }
    });
    return new NatsBus(nc, jetstream(nc), jsm, options);
  }

  private wire(subject: string): string {
    return (this.options.subjectPrefix ?? "") + subject;
  }

  private get partitions(): number {
    return this.options.partitions ?? DEFAULT_PARTITIONS;
  }

  /** The subject a message of an account travels on. */
  partitioned(subject: string, accountId: string): string {
    return `${subject}.p${partitionOf(accountId, this.partitions)}`;
  }

  /**
   * The durable consumers of a consumer's subjects: one per (subject, partition), and any other
   * of the subject's that exists: the un-partitioned one of a deployment from before partitions
   * (it keeps reading what was published on the bare subject: a backlog from before the upgrade,
   * or a producer not yet upgraded during a rolling one), and those of partitions beyond
   * NATS_PARTITIONS after it was lowered. None of those is created anew; none is left unread.
   */
  private async partsOf(durable: string, subjects: string[]): Promise<{ name: string; filter?: string }[]> {
    const existing = await whileJetStreamUnavailable(async () => {
      const names: string[] = [];
      for await (const info of await this.jsm.consumers.list(this.options.stream)) names.push(info.name);
      return names;
    });
    return subjects.flatMap((subject) => {
      const base = consumerName(durable, subject);
      const wanted = Array.from({ length: this.partitions }, (_, p) => ({ name: `${base}__p${p}`, filter: `${subject}.p${p}` }));
      const others = existing.filter((name) => name.startsWith(base) && /^(__p\d+)?$/.test(name.slice(base.length)) && !wanted.some((w) => w.name === name));
      return [...wanted, ...others.map((name) => ({ name }))];
    });
  }

  async publish(messages: BusMessage[]): Promise<PublishOutcome[]> {
    return Promise.all(
      messages.map(async (message) => {
        const h = natsHeaders();
        h.set("Nats-Msg-Id", message.id);
        h.set("Account-Id", message.accountId);
        h.set("Occurred-At", message.occurredAt);
        h.set("Aggregate", message.aggregate);
        for (const [name, value] of Object.entries(message.trace ?? {})) h.set(name, value);
        try {
          await this.js.publish(this.wire(this.partitioned(message.subject, message.accountId)), message.payload, { msgID: message.id, headers: h });
          return undefined;
        } catch (error) {
          return asError(error);
        }
      }),
    );
  }

  async subscribe(spec: ConsumerSpec): Promise<Subscription> {
    // One durable consumer per subject and partition: NATS servers before 2.10 (Debian's 2.9)
    // take a single filter_subject per consumer. Each handles its batches on its own.
    const parts = await this.partsOf(spec.durable, spec.subjects);
    const subscriptions = await Promise.all(parts.map((part) => this.consumePart(spec, part.name, part.filter)));
    return { stop: async () => void (await Promise.all(subscriptions.map((p) => p.stop()))) };
  }

  /** Reads one durable consumer; one of `filter` is created when missing (one without reads what exists). */
  private async consumePart(spec: ConsumerSpec, durable: string, filter: string | undefined): Promise<Subscription> {
    const ackWaitMs = this.options.ackWaitMs ?? ACK_WAIT_MS;
    const ackWait = ackWaitMs * 1_000_000;
    const log = this.options.logger;
    const ensure = () => whileJetStreamUnavailable(async () => {
      try {
        const info = await this.jsm.consumers.info(this.options.stream, durable);
        if (info.config.ack_wait !== ackWait) await this.jsm.consumers.update(this.options.stream, durable, { ack_wait: ackWait });
      } catch (error) {
        if (!isNotFound(error) || filter === undefined) throw error;
        await this.jsm.consumers.add(this.options.stream, {
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: ackWait,
          max_ack_pending: MAX_ACK_PENDING,
          max_deliver: -1,
          filter_subject: this.wire(filter),
        });
      }
    });
    await ensure();
    // bind: after missed heartbeats (a leader change) pull again at once, instead of first asking
    // for the consumer's info, which waits out a request timeout and a backoff of up to 1.5
    // expiries while the cluster elects a leader. A consumer that is gone is made again below.
    const messages = await whileJetStreamUnavailable(() =>
      whileNotFound(async () => (await this.js.consumers.get(this.options.stream, durable)).consume({ max_messages: 256, expires: PULL_EXPIRES_MS, idle_heartbeat: PULL_HEARTBEAT_MS, bind: true })),
    );
    this.running.add(messages);
    // A pull nobody answers (no leader yet, or no consumer), one told the consumer was deleted, or
    // one that hears nothing more: the consumer is made again when it is missing, so that the next
    // pull finds it.
    let checking = false;
    void (async () => {
      for await (const status of messages.status()) {
        // Also after missed heartbeats: a pull made just as the consumer was deleted is not told so,
        // it only hears nothing more.
        if ((status.type !== "consumer_deleted" && status.type !== "no_responders" && status.type !== "heartbeats_missed") || checking) continue;
        checking = true;
        ensure()
          .catch((error) => log?.warn({ err: error, consumer: durable }, "consumer could not be made again; trying at the next missed pull"))
          .finally(() => (checking = false));
      }
    })().catch((error) => log?.warn({ err: error, consumer: durable }, "consumer's status no longer watched"));
    const maxBatch = spec.maxBatch ?? 256;

    // Messages pile up in `queue` while a batch is being handled; the next batch takes all of
    // them at once (up to maxBatch). One batch at a time per subject and partition keeps its order.
    const queue: JsMsg[] = [];
    let handling: JsMsg[] = [];
    // Everything held is in progress: only a consumer that is gone lets its messages' ack wait run out.
    const inProgress = setInterval(() => {
      for (const m of [...handling, ...queue]) m.working();
    }, ackWaitMs / 4);
    inProgress.unref();
    let wake: (() => void) | undefined;
    let ended = false;
    const pump = (async () => {
      for await (const m of messages) {
        queue.push(m);
        wake?.();
      }
    })().finally(() => {
      ended = true;
      wake?.();
    });
    const worker = (async () => {
      for (;;) {
        if (!queue.length) {
          if (ended) return;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        handling = queue.splice(0, maxBatch);
        await this.handleBatch(handling, spec, log);
        handling = [];
      }
    })();
    return {
      stop: async () => {
        clearInterval(inProgress);
        await messages.close();
        this.running.delete(messages);
        await Promise.all([pump.catch(() => undefined), worker.catch(() => undefined)]);
      },
    };
  }

  private async handleBatch(batch: JsMsg[], spec: ConsumerSpec, log?: Logger): Promise<void> {
    const decoded: { m: JsMsg; message: BusMessage }[] = [];
    for (const m of batch) {
      const message = this.decode(m);
      if (message) decoded.push({ m, message });
      else {
        log?.error({ seq: m.seq, subject: m.subject }, "message without its headers dropped");
        m.term();
      }
    }
    if (!decoded.length) return;
    const outcomes = await handleIsolating(decoded.map((d) => d.message), spec.handle);
    outcomes.forEach((error, i) => {
      const { m, message } = decoded[i];
      if (!error) return m.ack();
      const deliveries = m.info.deliveryCount;
      if (deliveries >= MAX_DELIVER) {
        log?.error({ err: error, id: message.id, subject: message.subject, consumer: spec.durable, deliveries }, "message dead-lettered: handler keeps failing");
        return m.term();
      }
      const delay = retryDelayMs(deliveries);
      log?.warn({ err: error, id: message.id, subject: message.subject, consumer: spec.durable, delay }, "handler failed; redelivering");
      m.nak(delay);
    });
  }

  private decode(m: JsMsg): BusMessage | undefined {
    const h = m.headers;
    const id = h?.get("Nats-Msg-Id");
    const accountId = h?.get("Account-Id");
    if (!id || !accountId) return undefined;
    const prefix = this.options.subjectPrefix ?? "";
    const traceparent = h?.get("traceparent");
    const tracestate = h?.get("tracestate");
    return {
      id,
      subject: withoutPartition(m.subject.startsWith(prefix) ? m.subject.slice(prefix.length) : m.subject),
      accountId,
      occurredAt: h?.get("Occurred-At") || new Date(Number(m.info.timestampNanos) / 1e6).toISOString(),
      aggregate: h?.get("Aggregate") ?? "",
      payload: m.data,
      ...(traceparent ? { trace: { traceparent, ...(tracestate ? { tracestate } : {}) } } : {}),
    };
  }

  async ping(): Promise<void> {
    await this.nc.flush();
    await this.jsm.streams.info(this.options.stream);
  }

  async backlog(durable: string, subjects: string[]): Promise<number> {
    const infos = await Promise.all((await this.partsOf(durable, subjects)).map((part) => this.jsm.consumers.info(this.options.stream, part.name)));
    return infos.reduce((sum, info) => sum + info.num_pending + info.num_ack_pending, 0);
  }

  async close(): Promise<void> {
    for (const m of this.running) await m.close().catch(() => undefined);
    this.running.clear();
    await this.nc.drain().catch(() => undefined);
  }

  /** The stream's configured limits and message count (tests, operators). */
  async streamInfo() {
    return this.jsm.streams.info(this.options.stream);
  }

  /** Removes the stream (tests clean up after themselves). */
  async deleteStream(): Promise<void> {
    await this.jsm.streams.delete(this.options.stream).catch(() => undefined);
  }
}

/** A durable name per (consumer, subject); names may not hold `.`, `*` or `>`. */
export function consumerName(durable: string, subject: string): string {
  return `${durable}__${subject.replace(/\./g, "_").replace(/\*/g, "any").replace(/>/g, "all")}`;
}

/**
 * Runs a stream or consumer set-up again while JetStream cannot answer it (a cluster electing a
 * leader after a server was lost, or busy with a stream's new copies while replicas start
 * together): it did not answer in time, nobody answered, or it said it is temporarily unavailable
 * (503). Up to 15 times, `delayMs` apart, instead of failing the process's start.
 */
export async function whileJetStreamUnavailable<T>(work: () => Promise<T>, delayMs = 1000): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 15 || !isUnavailable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

function isUnavailable(error: unknown): boolean {
  const name = (error as Error)?.name;
  return name === "TimeoutError" || name === "NoResponders" || (error instanceof JetStreamApiError && error.status === 503);
}

/**
 * A consumer that exists (just found or made) may still be "not found" for a moment in a
 * JetStream cluster: its group is being formed, or its leader is being elected after a server was
 * lost. Asked again, a second apart, for up to 30 s, rather than failing the process's start.
 */
async function whileNotFound<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 30 || !isNotFound(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  return e?.code === 404 || e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(e?.message ?? "");
}
