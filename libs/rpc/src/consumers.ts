import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { BatchHandler, Bus, BusMessage, Subscription } from "@analytics/bus";
import type { Topic } from "@analytics/contracts";
import type { Db, Tx } from "@analytics/db";
import { processBatchOnce } from "@analytics/inbox";

/** A message as a consumer sees it: decoded by its topic, already de-duplicated. */
export interface Delivery<D extends DescMessage = DescMessage> {
  id: string;
  subject: string;
  accountId: string;
  occurredAt: string;
  topic: Topic<D>;
  message: MessageShape<D>;
}

/** Narrows a delivery to one topic's message type. */
export function isTopic<D extends DescMessage>(delivery: Delivery, topic: Topic<D>): delivery is Delivery<D> {
  return delivery.subject === topic.subject;
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

/** What the bus calls with a batch: inbox de-duplication and the effect in one transaction. */
export function consumerHandler(db: Db, service: string, consumer: ConsumerDefinition): BatchHandler {
  const durable = durableName(service, consumer);
  const topics = new Map(consumer.topics.map((t) => [t.subject, t]));
  return async (messages) => {
    await processBatchOnce(db, durable, messages, (tx, fresh) => consumer.handle(tx, fresh.map((m) => decodeDelivery(topics, m))));
  };
}

/** Subscribes a consumer of a service to its topics. */
export function subscribeConsumer(bus: Bus, db: Db, service: string, consumer: ConsumerDefinition): Promise<Subscription> {
  return bus.subscribe({
    durable: durableName(service, consumer),
    subjects: consumer.topics.map((t) => t.subject),
    handle: consumerHandler(db, service, consumer),
  });
}
