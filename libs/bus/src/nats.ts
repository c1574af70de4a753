import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type ConsumerMessages,
} from "@nats-io/jetstream";
import type { Logger } from "pino";
import { type Bus, type BusMessage, type Subscription, type SubscriptionSpec, retryDelayMs } from "./types";

export interface NatsBusOptions {
  url: string;
  /** Stream holding every `analytics.>` subject. */
  stream: string;
  /** Prepended to every subject on the wire (tests and shared servers); stripped on receipt. */
  subjectPrefix?: string;
  logger?: Logger;
  name?: string;
}

const DUPLICATE_WINDOW_NS = 10 * 60 * 1_000_000_000; // 10 minutes of Nats-Msg-Id de-duplication
const ACK_WAIT_NS = 30 * 1_000_000_000;

/**
 * JetStream adapter: one stream, a durable pull consumer per consuming service with explicit acks;
 * publishes carry Nats-Msg-Id so a relay that publishes twice stores once.
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
    const nc = await connect({ servers: options.url, name: options.name, maxReconnectAttempts: -1 });
    const jsm = await jetstreamManager(nc);
    const prefix = options.subjectPrefix ?? "";
    const subjects = [`${prefix}analytics.>`];
    try {
      await jsm.streams.info(options.stream);
      await jsm.streams.update(options.stream, { subjects, duplicate_window: DUPLICATE_WINDOW_NS });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await jsm.streams.add({ name: options.stream, subjects, duplicate_window: DUPLICATE_WINDOW_NS });
    }
    return new NatsBus(nc, jetstream(nc), jsm, options);
  }

  private wire(subject: string): string {
    return (this.options.subjectPrefix ?? "") + subject;
  }

  async publish(message: BusMessage): Promise<void> {
    const h = natsHeaders();
    h.set("Nats-Msg-Id", message.id);
    h.set("Account-Id", message.accountId);
    await this.js.publish(this.wire(message.subject), JSON.stringify(message), { msgID: message.id, headers: h });
  }

  async subscribe(spec: SubscriptionSpec): Promise<Subscription> {
    // One durable consumer per subject filter: NATS servers before 2.10 (Debian's 2.9) take a
    // single filter_subject per consumer.
    const parts = await Promise.all(spec.subjects.map((s) => this.consumeFilter(spec, s)));
    return { stop: async () => void (await Promise.all(parts.map((p) => p.stop()))) };
  }

  private async consumeFilter(spec: SubscriptionSpec, subject: string): Promise<Subscription> {
    const durable = consumerName(spec.durable, subject);
    const filter = this.wire(subject);
    try {
      await this.jsm.consumers.info(this.options.stream, durable);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.jsm.consumers.add(this.options.stream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ACK_WAIT_NS,
        max_deliver: -1,
        filter_subject: filter,
      });
    }
    const consumer = await this.js.consumers.get(this.options.stream, durable);
    const messages = await consumer.consume({ max_messages: 256 });
    this.running.add(messages);
    const log = this.options.logger;
    const loop = (async () => {
      // One message at a time per consumer keeps each subject's order.
      for await (const m of messages) {
        let message: BusMessage;
        try {
          message = m.json<BusMessage>();
        } catch (error) {
          log?.error({ err: error, seq: m.seq, subject: m.subject }, "undecodable message dropped");
          m.term();
          continue;
        }
        try {
          await spec.handler(message);
          m.ack();
        } catch (error) {
          const delay = retryDelayMs(m.info.deliveryCount);
          log?.warn({ err: error, id: message.id, subject: message.subject, delay }, "handler failed; redelivering");
          m.nak(delay);
        }
      }
    })();
    return {
      stop: async () => {
        await messages.close();
        this.running.delete(messages);
        await loop.catch(() => undefined);
      },
    };
  }

  async ping(): Promise<void> {
    await this.nc.flush();
    await this.jsm.streams.info(this.options.stream);
  }

  async close(): Promise<void> {
    for (const m of this.running) await m.close().catch(() => undefined);
    this.running.clear();
    await this.nc.drain().catch(() => undefined);
  }

  /** Removes the stream (tests clean up after themselves). */
  async deleteStream(): Promise<void> {
    await this.jsm.streams.delete(this.options.stream).catch(() => undefined);
  }
}

/** A durable name per (service, filter); names may not hold `.`, `*` or `>`. */
export function consumerName(durable: string, subject: string): string {
  return `${durable}__${subject.replace(/\./g, "_").replace(/\*/g, "any").replace(/>/g, "all")}`;
}

function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; api_error?: { err_code?: number }; message?: string };
  return e?.code === 404 || e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10014 || /not found/i.test(e?.message ?? "");
}
