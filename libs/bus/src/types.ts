/**
 * An integration message: one committed change, published on
 * `analytics.<service>.<entity>.<verb>`. `id` is the outbox row id and de-duplicates everywhere.
 */
export interface BusMessage<T = unknown> {
  id: string;
  subject: string;
  accountId: string;
  occurredAt: string;
  data: T;
}

export type MessageHandler = (message: BusMessage) => Promise<void>;

export interface SubscriptionSpec {
  /** Durable consumer name: one per consuming service, so each service sees every message once. */
  durable: string;
  /** Subject filters, NATS wildcards allowed (`analytics.catalogue.sku.*`). */
  subjects: string[];
  handler: MessageHandler;
}

export interface Subscription {
  stop(): Promise<void>;
}

/** One interface, two adapters: NATS JetStream in production, in-process for the single-process default. */
export interface Bus {
  readonly kind: "nats" | "in-process";
  /** Resolves once the bus has the message (JetStream: on the PubAck). */
  publish(message: BusMessage): Promise<void>;
  subscribe(spec: SubscriptionSpec): Promise<Subscription>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** NATS subject matching: `*` one token, `>` the rest. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split(".");
  const s = subject.split(".");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === ">") return s.length > i;
    if (i >= s.length) return false;
    if (f[i] !== "*" && f[i] !== s[i]) return false;
  }
  return f.length === s.length;
}

/** Redelivery delay after a failed handler: 0.5 s doubling to 30 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, attempt - 1));
}
