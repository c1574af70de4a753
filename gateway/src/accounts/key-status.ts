import pg from "pg";
import type { Logger } from "pino";
import type { Db } from "@analytics/db";
import * as accounts from "./repository";

/**
 * Whether an API key is still active, answered from memory: a revoked key's tokens must stop at
 * once, yet asking Postgres on every request costs a query per call. Each replica LISTENs on
 * REVOKED_CHANNEL (repository.ts); a revocation NOTIFYs in its transaction, so every replica forgets the key when
 * it commits. While the listening connection is down nothing is cached (every request asks the
 * database), and the cache is emptied when it comes back, since notifications may have been missed.
 */
export class KeyStatusCache {
  private readonly active = new Map<string, number>();
  private listener?: pg.Client;
  private listening = false;
  private closed = false;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly databaseUrl: string,
    private readonly logger?: Logger,
    /** Even with notifications, an entry is asked again after this long. */
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 100_000,
    private readonly reconnectMs = 1_000,
  ) {}

  /** Whether revocations are being heard (only then are answers cached). */
  get isListening(): boolean {
    return this.listening;
  }

  async start(): Promise<void> {
    await this.listen().catch((err) => this.logger?.warn({ err }, "key status: not listening yet; every request asks the database"));
  }

  async isActive(accountId: string, apiKeyId: string): Promise<boolean> {
    const id = `${accountId}/${apiKeyId}`;
    const until = this.active.get(id);
    // Not listening, a cached answer could hide a revocation: ask (listen() empties the cache
    // when it is back).
    if (this.listening && until !== undefined && until > Date.now()) return true;
    const active = await accounts.keyIsActive(this.db, accountId, apiKeyId);
    if (active) {
      if (this.active.size >= this.maxEntries) this.active.clear();
      this.active.set(id, Date.now() + this.ttlMs);
    } else this.active.delete(id);
    return active;
  }

  /** Forgets a key at once in this replica (the others hear the NOTIFY). */
  forget(accountId: string, apiKeyId: string): void {
    this.active.delete(`${accountId}/${apiKeyId}`);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.listening = false;
    await this.listener?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: "gateway-key-status" });
    const lost = (err?: unknown) => {
      if (this.listener !== client) return;
      this.listening = false;
      this.active.clear();
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.logger?.warn({ err }, "key status: listening connection lost; asking the database until it is back");
      this.retry = setTimeout(() => void this.listen().catch((e) => lost(e)), this.reconnectMs);
      this.retry.unref();
    };
    this.listener = client;
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (n) => {
      const [accountId, apiKeyId] = (n.payload ?? "").split("/");
      if (accountId && apiKeyId) this.forget(accountId, apiKeyId);
      else this.active.clear();
    });
    await client.connect();
    await client.query(`LISTEN ${accounts.REVOKED_CHANNEL}`);
    // Anything cached before now may have missed a notification.
    this.active.clear();
    this.listening = true;
  }
}
