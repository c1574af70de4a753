import { Gauge, Registry } from "prom-client";
import { closeServer, listenMetrics, sharedRender } from "../src";

/** A registry whose one gauge counts the renders that read it; `hold` keeps a render open until released. */
function countingRegistry() {
  const registry = new Registry();
  const state = { renders: 0, hold: undefined as Promise<void> | undefined };
  new Gauge({
    name: "renders",
    help: "renders of this registry",
    registers: [registry],
    async collect() {
      state.renders += 1;
      this.set(state.renders);
      await state.hold;
    },
  });
  return { registry, state };
}

describe("metrics rendered at most once a second, shared by every scraper", () => {
  it("renders once for scrapes at once, keeps the text for the interval, then renders again", async () => {
    const { registry, state } = countingRegistry();
    let now = 1_000_000;
    const scrape = sharedRender(registry, 1_000, () => now);
    const texts = await Promise.all(Array.from({ length: 32 }, () => scrape()));
    expect(state.renders).toBe(1);
    expect(new Set(texts)).toEqual(new Set([expect.stringContaining("renders 1")]));
    now += 999;
    expect(await scrape()).toContain("renders 1");
    now += 1;
    expect(await scrape()).toContain("renders 2");
    expect(state.renders).toBe(2);
  });

  it("shares a render that outlasts the interval (a slow gauge) instead of starting more", async () => {
    const { registry, state } = countingRegistry();
    let now = 0;
    const scrape = sharedRender(registry, 1_000, () => now);
    let release!: () => void;
    state.hold = new Promise((resolve) => (release = resolve));
    const first = scrape();
    now += 5_000;
    const later = scrape();
    release();
    expect(await Promise.all([first, later])).toEqual([expect.stringContaining("renders 1"), expect.stringContaining("renders 1")]);
    expect(state.renders).toBe(1);
  });

  it("keeps no failed render: the next scrape renders again", async () => {
    const registry = new Registry();
    let fail = true;
    new Gauge({
      name: "flaky",
      help: "fails its first read",
      registers: [registry],
      collect() {
        if (fail) throw new Error("down");
        this.set(1);
      },
    });
    const scrape = sharedRender(registry, 60_000);
    await expect(scrape()).rejects.toThrow("down");
    fail = false;
    expect(await scrape()).toContain("flaky 1");
  });

  it("answers 32 scrapers at once on its port with one render", async () => {
    const { registry, state } = countingRegistry();
    const server = await listenMetrics(registry, 0, "127.0.0.1");
    try {
      const { port } = server.address() as { port: number };
      const answers = await Promise.all(Array.from({ length: 32 }, () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text())));
      // One render serves every scraper; a machine stalled over a second between arrivals may render
      // again, never once per scraper (32 without the sharing).
      expect(state.renders).toBeLessThanOrEqual(3);
      expect(new Set(answers).size).toBeLessThanOrEqual(state.renders);
    } finally {
      await closeServer(server);
    }
  });
});
