import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { Registry } from "prom-client";
import type { BatchHandler, Bus, BusMessage, Subscription } from "@analytics/bus";
import type { Topic } from "@analytics/contracts";
import { mapInSlices, type Db, type Tx } from "@analytics/db";
import { processBatchOnce } from "@analytics/inbox";
import { consumerBatchDurations, endSpan, SpanKind, startSpan } from "@analytics/telemetry";

/** A message as a consumer sees it: decoded by its topic, already de-duplicated. */
export interface Delivery<D extends DescMessage = DescMessage> {
  id: string;
  subject: string;
  accountId: string;
  occurredAt: string;
  topic: Topic<D>;
  message: MessageShape<D>;
}

/**
 * One consumer of a service: the topics it reads and what it does with a batch of new messages,
 * inside the transaction that records them in the inbox. The bus hands batches of whatever has
 * arrived (up to a few hundred); a failing batch is retried message by message.
 */
export interface ConsumerDefinition {
  /** Unique within the service; the durable name is `<service>-<name>`. */
  name: string;
  topics: Topic[];
  handle(tx: Tx, deliveries: Delivery[]): Promise<void>;
}

export function decodeDelivery(topics: Map<string, Topic>, message: BusMessage): Delivery {
  const topic = topics.get(message.subject);
  if (!topic) throw new Error(`no topic for subject ${message.subject}`);
  return {
    id: message.id,
    subject: message.subject,
    accountId: message.accountId,
    occurredAt: message.occurredAt,
    topic,
    message: fromBinary(topic.schema, message.payload),
  };
}

export const durableName = (service: string, consumer: ConsumerDefinition) => `${service}-${consumer.name}`;

/** Records how long each consumer batch took and how it ended. */
export type ObserveBatch = (durable: string, outcome: "ok" | "failed", seconds: number) => void;

export function consumerMetrics(registry: Registry): ObserveBatch {
  const durations = consumerBatchDurations(registry);
  return (consumer, outcome, seconds) => durations.observe({ consumer, outcome }, seconds);
}

/**
 * What the bus calls with a batch: inbox de-duplication and the effect in one transaction. Each
 * traced message gets a span of its own trace, ending with the batch's transaction.
 */
export function consumerHandler(db: Db, service: string, consumer: ConsumerDefinition, observe?: ObserveBatch): BatchHandler {
  const durable = durableName(service, consumer);
  const topics = new Map(consumer.topics.map((t) => [t.subject, t]));
  return async (messages) => {
    const started = performance.now();
    const spans = messages.map((m) =>
      m.trace ? startSpan(`process ${m.subject}`, SpanKind.CONSUMER, m.trace, { "messaging.consumer.group.name": durable, "messaging.message.id": m.id, "messaging.batch.message_count": messages.length }) : undefined,
    );
    let failure: unknown;
    try {
      // Decoded in slices: a batch of a few hundred in one go held the process's other work waiting.
      await processBatchOnce(db, durable, messages, async (tx, fresh) => consumer.handle(tx, await mapInSlices(fresh, (m) => decodeDelivery(topics, m))));
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      for (const span of spans) endSpan(span, failure);
      observe?.(durable, failure === undefined ? "ok" : "failed", (performance.now() - started) / 1000);
    }
  };
}

/** Subscribes a consumer of a service to its topics. */
export function subscribeConsumer(bus: Bus, db: Db, service: string, consumer: ConsumerDefinition, observe?: ObserveBatch): Promise<Subscription> {
  return bus.subscribe({
    durable: durableName(service, consumer),
    subjects: consumer.topics.map((t) => t.subject),
    handle: consumerHandler(db, service, consumer, observe),
  });
}
