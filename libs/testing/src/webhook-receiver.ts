import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** One delivery a receiver accepted as genuine (its signature checked by the standardwebhooks package, not our code). */
export interface ReceivedDelivery {
  endpoint: string;
  webhookId: string;
  body: { id: string; type: string; timestamp: string; data: { id: string; eventType: string; payload: Record<string, unknown> } };
  /** The answer it was given. */
  status: number;
}

/**
 * A local webhook receiver: one path per endpoint (`/<name>`), each with its secrets. Every POST
 * is verified with the Standard Webhooks reference library; a delivery that fails verification
 * is recorded in `rejected` and answered 400. `answer` decides each verified delivery's status
 * (and may wait before answering).
 */
export interface WebhookReceiver {
  url(endpoint: string): string;
  /** Secrets the endpoint's deliveries must verify with (any one of them). */
  trust(endpoint: string, ...secrets: string[]): void;
  received: ReceivedDelivery[];
  rejected: { endpoint: string; reason: string }[];
  /** Requests being answered right now, per endpoint. */
  open: Map<string, number>;
  /** The most requests open at once, per endpoint. */
  mostOpen: Map<string, number>;
  answer: (endpoint: string, delivery: Omit<ReceivedDelivery, "status">) => number | Promise<number>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secrets = new Map<string, string[]>();
  const receiver: WebhookReceiver = {
    url: (endpoint) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/${endpoint}`,
    trust: (endpoint, ...s) => void secrets.set(endpoint, s),
    received: [],
    rejected: [],
    open: new Map(),
    mostOpen: new Map(),
    answer: () => 204,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const endpoint = (req.url ?? "/").slice(1);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const open = (receiver.open.get(endpoint) ?? 0) + 1;
      receiver.open.set(endpoint, open);
      receiver.mostOpen.set(endpoint, Math.max(open, receiver.mostOpen.get(endpoint) ?? 0));
      const reply = (status: number) => {
        receiver.open.set(endpoint, (receiver.open.get(endpoint) ?? 1) - 1);
        res.writeHead(status).end();
      };
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = { "webhook-id": String(req.headers["webhook-id"]), "webhook-timestamp": String(req.headers["webhook-timestamp"]), "webhook-signature": String(req.headers["webhook-signature"]) };
      const verified = (secrets.get(endpoint) ?? []).some((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      if (!verified) {
        receiver.rejected.push({ endpoint, reason: `signature ${headers["webhook-signature"]} did not verify` });
        return reply(400);
      }
      const delivery = { endpoint, webhookId: headers["webhook-id"], body: JSON.parse(body) };
      void Promise.resolve(receiver.answer(endpoint, delivery)).then((status) => {
        receiver.received.push({ ...delivery, status });
        reply(status);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return receiver;
}
