// Bundled by bench/connect-transport.mjs: the same generated clients of the events and catalogue services
// over the gateway's transport (libs/rpc/src/transport.ts) and over connect-node's own.
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { callerHeaders } from "@analytics/auth";
import { catalogueV1, eventsV1 } from "@analytics/contracts";
import { createServiceTransport } from "@analytics/rpc";

export function clientPairs(urls: { catalogue: string; events: string }, internalToken: string, caller: { accountId: string; apiKeyId: string }) {
  const options = { headers: callerHeaders(internalToken, caller), timeoutMs: 10_000 };
  const connectNode = (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true });
  const calls = (make: (baseUrl: string) => ReturnType<typeof createServiceTransport>) => {
    const events = createClient(eventsV1.EventsService, make(urls.events));
    const catalogue = createClient(catalogueV1.CatalogueService, make(urls.catalogue));
    return {
      // Unary: the call GET /events?pageSize=10 makes.
      eventsPage: () => events.listEvents({ page: { page: 1, pageSize: 10 } }, options),
      // Server streaming: the call GET /products?key=K makes.
      productByKey: async (key: string) => {
        const chunks = [];
        for await (const chunk of catalogue.streamProductsJson({ list: { key, page: { page: 1, pageSize: 10 } } }, options)) chunks.push(chunk);
        return chunks;
      },
    };
  };
  return { ours: calls((url) => createServiceTransport(url)), connectNode: calls(connectNode) };
}
