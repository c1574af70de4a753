export default async function globalTeardown(): Promise<void> {
  const containers = (globalThis as { __containers?: { stop(): Promise<unknown> }[] }).__containers ?? [];
  await Promise.all(containers.map((c) => c.stop()));
}
