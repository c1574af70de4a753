import type { Logger } from "pino";
import { type Bus, type BusMessage, type Subscription, type SubscriptionSpec, subjectMatches } from "./types";

/**
 * The bus of the single-process default. publish() hands the message to every matching subscriber
 * and resolves only when all of them have processed it, so the outbox marks a row published only
 * after its effects are committed; a failing subscriber makes publish() reject and the outbox
 * retries later (subscribers are idempotent through their inbox). Nothing is kept in memory.
 */
export class InProcessBus implements Bus {
  readonly kind = "in-process" as const;
  private readonly subscriptions = new Set<SubscriptionSpec>();
  private closed = false;

  constructor(private readonly logger?: Logger) {}

  async publish(message: BusMessage): Promise<void> {
    if (this.closed) throw new Error("bus closed");
    const targets = [...this.subscriptions].filter((s) => s.subjects.some((f) => subjectMatches(f, message.subject)));
    const results = await Promise.allSettled(targets.map((s) => s.handler(structuredClone(message))));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed.length) {
      this.logger?.warn({ subject: message.subject, id: message.id, err: failed[0].reason }, "subscriber failed");
      throw new Error(`${failed.length} subscriber(s) failed for ${message.subject}`);
    }
  }

  async subscribe(spec: SubscriptionSpec): Promise<Subscription> {
    this.subscriptions.add(spec);
    return { stop: async () => void this.subscriptions.delete(spec) };
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error("bus closed");
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscriptions.clear();
  }
}
