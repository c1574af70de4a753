import type { Logger } from "pino";
import { handleIsolating, type Bus, type BusMessage, type ConsumerSpec, type PublishOutcome, type Subscription, subjectMatches } from "./types";

/**
 * The bus of the single-process default. publish() hands each message to every consumer of its
 * subject and counts it published only when all of them have handled it, so the outbox marks a
 * row published only after its effects are committed; a message some consumer failed is refused
 * and the outbox retries it (consumers are idempotent through their inbox). Nothing is kept in
 * memory, so the launcher subscribes every consumer before any outbox relay starts: a message
 * that no consumer of this process wants is one nobody will ever ask for.
 */
export class InProcessBus implements Bus {
  readonly kind = "in-process" as const;
  private readonly consumers = new Set<ConsumerSpec>();
  private closed = false;

  constructor(private readonly logger?: Logger) {}

  async publish(messages: BusMessage[]): Promise<PublishOutcome[]> {
    if (this.closed) return messages.map(() => new Error("bus closed"));
    const outcomes: PublishOutcome[] = messages.map(() => undefined);
    await Promise.all(
      [...this.consumers].map(async (consumer) => {
        const wanted = messages.flatMap((m, i) => (consumer.subjects.some((f) => subjectMatches(f, m.subject)) ? [{ m, i }] : []));
        if (!wanted.length) return;
        const results = await handleIsolating(
          wanted.map(({ m }) => ({ ...m, payload: m.payload.slice() })),
          consumer.handle,
        );
        results.forEach((error, n) => {
          if (!error) return;
          this.logger?.warn({ consumer: consumer.durable, subject: wanted[n].m.subject, id: wanted[n].m.id, err: error }, "consumer failed");
          outcomes[wanted[n].i] ??= error;
        });
      }),
    );
    return outcomes;
  }

  async subscribe(spec: ConsumerSpec): Promise<Subscription> {
    this.consumers.add(spec);
    return { stop: async () => void this.consumers.delete(spec) };
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error("bus closed");
  }

  async close(): Promise<void> {
    this.closed = true;
    this.consumers.clear();
  }
}
