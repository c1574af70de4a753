import type { Client, RequestOptions } from "./client";
import { Events } from "../generated/events";
import type { Event } from "../generated/schemas";

export interface QueueOptions extends RequestOptions {
  /** Entries read at a time (at most 1000); 100 when absent. */
  pageSize?: number;
  /** Only entries of this type (update_sku, ...). */
  eventType?: Event["eventType"];
  /** Keep waiting for new entries when the queue is empty (tail); otherwise end there. */
  follow?: boolean;
  /** The wait between reads of an empty queue when following; 2 s when absent. */
  pollMs?: number;
}

/**
 * The account's pending queue entries, oldest first: each is acknowledged (marked `completed`,
 * PATCH /v2/api/events/batch, one call per page) once the loop asks for the next one, so an entry
 * whose handling threw or broke the loop stays pending and is read again. One page held at a time.
 */
export async function* eventQueue(client: Client, options: QueueOptions = {}): AsyncGenerator<Event> {
  const events = new Events(client);
  const { pageSize = 100, eventType, follow, pollMs = 2_000, ...request } = options;
  for (;;) {
    const page = await events.listEvents({ status: "pending", pageSize, event_type: eventType }, request);
    if (!page.length) {
      if (!follow) return;
      await client.sleep(pollMs, request.signal);
      continue;
    }
    const handled: string[] = [];
    try {
      for (const entry of page) {
        yield entry;
        handled.push(entry.id);
      }
    } finally {
      if (handled.length) await events.updateEventStatusBatch(handled.map((id) => ({ id, status: "completed" as const })), request);
    }
  }
}
