// Bundled by bench/gateway-hop.mjs: a direct Connect client of the services, as the gateway
// itself calls them (generated client, binary protocol, HTTP/2, internal credential).
import { callerHeaders } from "@analytics/auth";
import { catalogueV1, eventsV1, pricingV1 } from "@analytics/contracts";
import { createServiceClient } from "@analytics/rpc";

export function directClients(urls: { catalogue: string; events: string; pricing: string }, internalToken: string, caller: { accountId: string; apiKeyId: string }) {
  const options = { headers: callerHeaders(internalToken, caller) };
  const catalogue = createServiceClient(catalogueV1.CatalogueService, urls.catalogue);
  const events = createServiceClient(eventsV1.EventsService, urls.events);
  const pricing = createServiceClient(pricingV1.PricingService, urls.pricing);
  const productByKey = async (key: string) => {
    const chunks = [];
    for await (const chunk of catalogue.streamProductsJson({ list: { key, page: { page: 1, pageSize: 10 } } }, options)) chunks.push(chunk);
    return chunks;
  };
  return {
    // The catalogue call GET /products makes: the page as a stream of chunks of REST JSON.
    productByKey,
    // Both calls GET /products makes: the page, then the prices of its products.
    productByKeyWithPrices: async (key: string) => {
      const chunks = await productByKey(key);
      return pricing.productPricesJson({ productIds: chunks.flatMap((c) => c.ids) }, options);
    },
    eventsPage: () => events.listEvents({ page: { page: 1, pageSize: 10 } }, options),
  };
}
