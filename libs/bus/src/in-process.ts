import type { Logger } from "pino";
import { handleIsolating, type Bus, type BusMessage, type ConsumerSpec, type PublishOutcome, type Subscription, subjectMatches } from "./types";

/**
 * The bus of the single-process default. publish() hands each message to every consumer of its
 * subject and counts it published only when all of them have handled it, so the outbox marks a
 * row published only after its effects are committed; a message some consumer failed is refused
 * and the outbox retries it (consumers are idempotent through their inbox). Nothing is kept in
 * memory, so the launcher subscribes every consumer before any outbox relay starts: a message
 * that no consumer of this process wants is one nobody will ever ask for. A consumer that has
 * stopped (services close one after another on shutdown, while other relays still run) will ask
 * again at the next start: its messages are refused meanwhile, so they wait in the outbox.
 */
export class InProcessBus implements Bus {
  readonly kind = "in-process" as const;
  private readonly consumers = new Set<ConsumerSpec>();
  /** Every consumer that has subscribed, by durable name: one missing from `consumers` has stopped. */
  private readonly known = new Map<string, string[]>();
  private closed = false;

  constructor(private readonly logger?: Logger) {}

  async publish(messages: BusMessage[]): Promise<PublishOutcome[]> {
    if (this.closed) return messages.map(() => new Error("bus closed"));
    const running = new Set([...this.consumers].map((c) => c.durable));
    const stopped = [...this.known].filter(([durable]) => !running.has(durable));
    const outcomes: PublishOutcome[] = messages.map((m) => {
      const waiting = stopped.find(([, subjects]) => subjects.some((f) => subjectMatches(f, m.subject)));
      // The consumer is unreachable for now, as a bus would be: an outage, not the row's fault
      // (the outbox rolls such a claim back without counting an attempt).
      return waiting ? Object.assign(new Error(`consumer ${waiting[0]} is stopped`), { code: "ECONNREFUSED" }) : undefined;
    });
    await Promise.all(
      [...this.consumers].map(async (consumer) => {
        const wanted = messages.flatMap((m, i) => (!outcomes[i] && consumer.subjects.some((f) => subjectMatches(f, m.subject)) ? [{ m, i }] : []));
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
    this.known.set(spec.durable, spec.subjects);
    return { stop: async () => void this.consumers.delete(spec) };
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error("bus closed");
  }

  /** Nothing waits: publish() returns only once every consumer has handled the message. */
  async backlog(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.consumers.clear();
  }
}
