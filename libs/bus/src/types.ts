/**
 * An integration message: one committed change, published on
 * `analytics.<service>.<entity>.<verb>` with its proto message as `payload` (the subject names the
 * message type: libs/contracts/src/topics.ts). `id` is the outbox row id and de-duplicates
 * everywhere; `aggregate` names the changed thing (`sku:<uuid>`), whose messages the outbox relay
 * publishes in order.
 */
export interface BusMessage {
  id: string;
  subject: string;
  accountId: string;
  occurredAt: string;
  aggregate: string;
  payload: Uint8Array;
  /** W3C trace context of the change's request (traceparent, tracestate), carried as NATS headers; absent while tracing is off. */
  trace?: Record<string, string>;
}

/** Handles a batch; throwing fails the whole batch (the bus then retries message by message). */
export type BatchHandler = (messages: BusMessage[]) => Promise<void>;

export interface ConsumerSpec {
  /** Durable consumer name: each (service, consumer) sees every message of its subjects once. */
  durable: string;
  /** Exact subjects (one per topic). */
  subjects: string[];
  handle: BatchHandler;
  /** Largest batch handed to `handle` (default 256). */
  maxBatch?: number;
}

export interface Subscription {
  stop(): Promise<void>;
}

/** The outcome of one published message: undefined when the bus has it, else why not. */
export type PublishOutcome = Error | undefined;

/** One interface, two adapters: NATS JetStream in production, in-process for the single-process default. */
export interface Bus {
  readonly kind: "nats" | "in-process";
  /**
   * Publishes messages concurrently; one outcome per message, in order. A message counts as
   * published only when it is durably somewhere: JetStream's PubAck, or (in-process) every
   * consumer of its subject has handled it.
   */
  publish(messages: BusMessage[]): Promise<PublishOutcome[]>;
  subscribe(spec: ConsumerSpec): Promise<Subscription>;
  ping(): Promise<void>;
  /** Messages of a consumer's subjects not yet acknowledged by it (delivered or not): its lag. */
  backlog(durable: string, subjects: string[]): Promise<number>;
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

/**
 * Runs a batch; when it fails, runs each message alone, so one message that cannot be handled
 * fails only itself. One outcome per message.
 */
export async function handleIsolating(messages: BusMessage[], handle: BatchHandler): Promise<PublishOutcome[]> {
  try {
    await handle(messages);
    return messages.map(() => undefined);
  } catch (error) {
    if (messages.length === 1) return [asError(error)];
  }
  const outcomes: PublishOutcome[] = [];
  for (const message of messages) {
    outcomes.push(await handle([message]).then(() => undefined, asError));
  }
  return outcomes;
}

export const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));
