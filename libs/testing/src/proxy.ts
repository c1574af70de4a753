import net from "node:net";

export interface FreezableProxy {
  /** The database URL `target` with host and port replaced by the proxy's. */
  url: string;
  /** From now on nothing passes either way and new connections are accepted but not served: a server that hangs (as under SIGSTOP). */
  freeze(): void;
  /** As after SIGCONT: what was held passes, in order, and new connections are served. */
  thaw(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a server, to freeze it for one test without stopping the server that
 * other tests share. While frozen, bytes are held, not dropped, as a stopped process's sockets
 * hold them.
 */
export async function freezableProxy(targetUrl: string): Promise<FreezableProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  let frozen = false;
  /** Whatever waits for a thaw: held chunks, and clients accepted while frozen. */
  let held: (() => void)[] = [];
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const serve = (client: net.Socket) => {
    const upstream = net.connect(Number(target.port) || 5432, target.hostname);
    track(upstream);
    const forward = (from: net.Socket, to: net.Socket) => {
      from.on("data", (chunk) => {
        if (frozen) held.push(() => to.write(chunk));
        else to.write(chunk);
      });
      from.on("close", () => to.destroy());
    };
    forward(client, upstream);
    forward(upstream, client);
  };
  const server = net.createServer((client) => {
    track(client);
    if (frozen) held.push(() => serve(client));
    else serve(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      const waiting = held;
      held = [];
      for (const release of waiting) release();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
