import net from "node:net";

export interface FreezableProxy {
  /** The database URL `target` with host and port replaced by the proxy's. */
  url: string;
  /** From now on nothing passes either way and new connections are accepted but never served: a server that hangs (as under SIGSTOP). */
  freeze(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a server, to freeze it for one test without stopping the server that
 * other tests share.
 */
export async function freezableProxy(targetUrl: string): Promise<FreezableProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (frozen) return;
    const upstream = net.connect(Number(target.port) || 5432, target.hostname);
    track(upstream);
    const forward = (from: net.Socket, to: net.Socket) => {
      from.on("data", (chunk) => {
        if (!frozen) to.write(chunk);
      });
      from.on("close", () => to.destroy());
    };
    forward(client, upstream);
    forward(upstream, client);
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
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
