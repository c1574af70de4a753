import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Connections of planning's pool the streamed answers never take, kept for the replica's consumer,
 * planned volumes and data versions: a fifth of the pool, at least 1 (2 of 10, 1 of the chart's 3).
 */
export function reservedConnections(poolMax: number): number {
  return Math.max(1, Math.floor(poolMax / 5));
}

/** How many streamed answers may run at once: in all (`total`) and per account (`perAccount`). */
export interface AdmissionLimits {
  total: number;
  perAccount: number;
}

/**
 * The limits for a pool of `poolMax` connections: the answers together leave reservedConnections
 * free, and one account takes at most `perAccount` of them (PLANNING_ACCOUNT_MAX_ANSWERS), by
 * default half, so that an account's parallel answers never hold every connection.
 */
export function admissionLimits(poolMax: number, perAccount?: number): AdmissionLimits {
  const total = Math.max(1, poolMax - reservedConnections(poolMax));
  return { total, perAccount: Math.min(total, perAccount ?? Math.max(1, Math.floor(total / 2))) };
}

/**
 * Admission of the streamed answers (sales plans, breakdowns), each of which holds a connection
 * for its whole statement (up to PLANNING_QUERY_TIMEOUT_MS): over an account's share, or when the
 * answers already running fill theirs, the call is refused at once with RESOURCE_EXHAUSTED (a 429
 * with Retry-After at the gateway) instead of waiting for a connection that the other accounts'
 * reads then wait for too. Per process: each replica has its own pool.
 */
export class Admission {
  private running = 0;
  private readonly byAccount = new Map<string, number>();

  constructor(readonly limits: AdmissionLimits) {}

  /** Takes a place for an answer of `accountId`, or refuses it; the place is given back by the returned function. */
  enter(accountId: string): () => void {
    const mine = this.byAccount.get(accountId) ?? 0;
    if (mine >= this.limits.perAccount) {
      throw new ConnectError(`the account already has as many planning answers running as it may at once (${mine}); retry when one has ended`, Code.ResourceExhausted);
    }
    if (this.running >= this.limits.total) {
      throw new ConnectError(`planning is computing as many answers as it may at once (${this.running}); retry shortly`, Code.ResourceExhausted);
    }
    this.running++;
    this.byAccount.set(accountId, mine + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.running--;
      const now = this.byAccount.get(accountId)! - 1;
      if (now) this.byAccount.set(accountId, now);
      else this.byAccount.delete(accountId);
    };
  }

  /** The answer's chunks, run in a place of its account's (given back however the answer ends). */
  async *admitted<T>(accountId: string, answer: () => AsyncGenerator<T>): AsyncGenerator<T> {
    const leave = this.enter(accountId);
    try {
      yield* answer();
    } finally {
      leave();
    }
  }
}
