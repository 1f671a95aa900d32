/**
 * The supervised LISTEN connection (ARCHITECTURE "Storage"): a dropped listener reconnects by itself,
 * re-LISTENs, says `resync`, and notifications flow again.
 */
import net from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newEvent } from "../../src/log/events.js";
import { PgListener } from "../../src/store/pg-listener.js";
import type { Store, StoreNotification } from "../../src/store/store.js";
import { testDatabaseUrl } from "../support/database.js";
import { adminQuery, type FreshDatabase, postgresHarness } from "./harness.js";

const databaseUrl = testDatabaseUrl();

function nextNotification(
  store: Store,
  matches: (n: StoreNotification) => boolean,
): Promise<StoreNotification> {
  return new Promise((resolve) => {
    const stop = store.subscribe(
      (n) => {
        if (!matches(n)) return;
        stop();
        resolve(n);
      },
      { events: true },
    );
  });
}

/** A live subscription (its first resync seen); `next()` waits for the following resync. */
async function countResyncs(store: Store): Promise<{ next(): Promise<void> }> {
  let waiting: (() => void) | undefined;
  let live!: () => void;
  const subscribed = new Promise<void>((resolve) => {
    live = resolve;
  });
  store.subscribe(
    (n) => {
      if (n.channel !== "resync") return;
      live();
      waiting?.();
      waiting = undefined;
    },
    { events: true },
  );
  await subscribed;
  return {
    next: () =>
      new Promise<void>((resolve) => {
        waiting = resolve;
      }),
  };
}

async function listenerPid(applicationName: string): Promise<number | undefined> {
  const rows = await adminQuery(databaseUrl, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", [
    `${applicationName}:listener`,
  ]);
  return rows[0]?.pid as number | undefined;
}

describe("PostgreSQL listener supervision", () => {
  let db: FreshDatabase;
  beforeEach(async () => {
    db = await postgresHarness(databaseUrl).fresh();
  });
  afterEach(async () => {
    await db.dispose();
  });

  it("reconnects after its backend is terminated, says resync, and delivers later notifications", async () => {
    const applicationName = `bdsh-supervision-${process.pid}-${Date.now()}`;
    const store = await db.open({ applicationName });
    const writer = await db.open();
    const session = await store.createSession();
    const resyncs = await countResyncs(store);
    const before = await listenerPid(applicationName);
    expect(before).toBeDefined();

    const resynced = resyncs.next();
    await adminQuery(databaseUrl, "SELECT pg_terminate_backend($1)", [before]);
    await resynced;
    const after = await listenerPid(applicationName);
    expect(after).toBeDefined();
    expect(after).not.toBe(before);

    const appended = nextNotification(store, (n) => n.channel === "events" && n.sessionId === session.id);
    await writer.append(session.id, [newEvent("agent/status", { status: "running" })], 0);
    expect(await appended).toEqual({ channel: "events", sessionId: session.id, seq: 1 });
  });

  it("keeps a follower going across a reconnect", async () => {
    const applicationName = `bdsh-follow-${process.pid}-${Date.now()}`;
    const store = await db.open({ applicationName });
    const writer = await db.open();
    const session = await store.createSession();
    await writer.append(session.id, [newEvent("agent/status", { status: "running" })], 0);
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const event of store.follow(session.id, { signal: controller.signal })) {
      seen.push(event.seq);
      if (event.seq === 1) {
        const resynced = (await countResyncs(store)).next();
        await adminQuery(databaseUrl, "SELECT pg_terminate_backend($1)", [
          await listenerPid(applicationName),
        ]);
        await resynced;
        await writer.append(session.id, [newEvent("agent/status", { status: "idle" })], 1);
      }
      if (event.seq === 2) controller.abort();
    }
    expect(seen).toEqual([1, 2]);
  });
});

/** A TCP proxy to PostgreSQL whose open connections can be frozen: alive to the kernel, silent to pg. */
async function freezableProxy(): Promise<{ port: number; freeze(): void; close(): void }> {
  const target = new URL(databaseUrl);
  const links: { frozen: boolean; sockets: net.Socket[] }[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    const link = { frozen: false, sockets: [client, upstream] };
    links.push(link);
    client.on("data", (data) => link.frozen || upstream.write(data));
    upstream.on("data", (data) => link.frozen || client.write(data));
    for (const s of link.sockets) {
      s.on("error", () => {});
      s.on("close", () => {
        for (const other of link.sockets) other.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => {
      for (const link of links) link.frozen = true;
    },
    close: () => {
      for (const link of links) for (const s of link.sockets) s.destroy();
      server.close();
    },
  };
}

describe("PgListener heartbeat", () => {
  it("notices a connection that went silent, reconnects and listens again", async () => {
    const proxy = await freezableProxy();
    const url = new URL(databaseUrl);
    url.port = String(proxy.port);
    const channel = `bdsh_heartbeat_${process.pid}`;
    let connects = 0;
    let onConnect = () => {};
    const received: string[] = [];
    let onPayload = () => {};
    const listener = new PgListener({
      connectionString: url.toString(),
      channels: [channel],
      heartbeatMs: 50,
      heartbeatTimeoutMs: 200,
      onConnected: () => {
        connects++;
        onConnect();
      },
      onNotification: (_channel, payload) => {
        received.push(payload);
        onPayload();
      },
    });
    const connectedTimes = (n: number) =>
      new Promise<void>((resolve) => {
        onConnect = () => connects >= n && resolve();
        onConnect();
      });
    try {
      listener.start();
      await connectedTimes(1);
      proxy.freeze();
      await connectedTimes(2);
      expect(listener.connected).toBe(true);
      const delivered = new Promise<void>((resolve) => {
        onPayload = () => received.includes("after") && resolve();
      });
      await adminQuery(databaseUrl, "SELECT pg_notify($1, 'after')", [channel]);
      await delivered;
    } finally {
      await listener.stop();
      proxy.close();
    }
  });
});
