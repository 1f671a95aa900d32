/**
 * A supervised LISTEN connection (ARCHITECTURE "Storage": neither `pg` nor `postgres.js` recovers a dropped
 * listener by itself).
 *
 * Invariants:
 * - One dedicated `pg.Client` with TCP keepalive, LISTENing on every channel given, and on each channel
 *   added later (`addChannel`, e.g. the events channel once something follows a session's events).
 * - A heartbeat query every `heartbeatMs` detects a connection that died without telling us; a heartbeat
 *   that fails or takes longer than `heartbeatTimeoutMs` counts as a dead connection.
 * - On error, end or a failed heartbeat it reconnects with backoff (100 ms doubling to 5 s, reset after a
 *   successful connect), LISTENs again, and only then calls `onConnected` — the store turns that into a
 *   `resync`, because notifications sent while it was away are lost for good and rows must be re-read.
 * - `stop()` ends the loop and the connection; nothing is retried afterwards.
 */
import pg from "pg";

export type PgListenerOptions = {
  connectionString: string;
  channels: readonly string[];
  applicationName?: string;
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  onNotification: (channel: string, payload: string) => void;
  /** Called after every successful (re)connect, once all channels are listened to. */
  onConnected: () => void;
  onError?: (error: Error) => void;
};

export class PgListener {
  private readonly channels: Set<string>;
  private readonly added = new Map<string, Promise<void>>();
  private running: Promise<void> | undefined;
  private stopped = false;
  private client: pg.Client | undefined;
  private interrupt: (() => void) | undefined;
  private isConnected = false;

  constructor(private readonly options: PgListenerOptions) {
    this.channels = new Set(options.channels);
  }

  /**
   * LISTENs on one more channel, now if connected and after every reconnect. Resolves once the channel is
   * listened to on the current connection (at once if not connected: the next connect listens to it).
   */
  addChannel(channel: string): Promise<void> {
    let added = this.added.get(channel);
    if (!added) {
      this.channels.add(channel);
      const client = this.client;
      added = client
        ? client.query(`LISTEN ${client.escapeIdentifier(channel)}`).then(
            () => undefined,
            () => undefined, // the connection broke: the reconnect LISTENs to every channel
          )
        : Promise.resolve();
      this.added.set(channel, added);
    }
    return added;
  }

  /** True while the connection is up and every channel is listened to. */
  get connected(): boolean {
    return this.isConnected;
  }

  /** Starts the supervision loop once; later calls do nothing. */
  start(): void {
    if (this.running || this.stopped) return;
    this.running = this.supervise();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.interrupt?.();
    await this.running;
  }

  private async supervise(): Promise<void> {
    const min = this.options.minBackoffMs ?? 100;
    const max = this.options.maxBackoffMs ?? 5000;
    let backoff = min;
    while (!this.stopped) {
      const client = new pg.Client({
        connectionString: this.options.connectionString,
        keepAlive: true,
        application_name: this.options.applicationName ?? "bdsh-listener",
      });
      const broken = new Promise<void>((resolve) => {
        this.interrupt = resolve;
        client.on("error", (error) => {
          this.options.onError?.(error);
          resolve();
        });
        client.on("end", () => resolve());
      });
      client.on("notification", (m) => this.options.onNotification(m.channel, m.payload ?? ""));
      try {
        await Promise.race([
          this.listen(client),
          broken.then(() => Promise.reject(new Error("connection lost"))),
        ]);
        if (this.stopped) break;
        this.client = client;
        this.isConnected = true;
        backoff = min;
        this.options.onConnected();
        await Promise.race([broken, this.heartbeat(client)]);
      } catch (error) {
        this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
      } finally {
        this.isConnected = false;
        this.client = undefined;
        client.removeAllListeners("notification");
        client.end().catch(() => {});
      }
      if (this.stopped) break;
      await this.pause(backoff);
      backoff = Math.min(backoff * 2, max);
    }
  }

  private async listen(client: pg.Client): Promise<void> {
    await client.connect();
    // A channel added while connecting is picked up by the next round.
    const listened = new Set<string>();
    for (let missing = [...this.channels]; missing.length; ) {
      for (const channel of missing) {
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
        listened.add(channel);
      }
      missing = [...this.channels].filter((c) => !listened.has(c));
    }
  }

  /**
   * Resolves when a heartbeat fails or times out; never resolves on a healthy connection. The next beat is
   * scheduled only after the previous one answered, so beats never queue up behind a silent connection.
   */
  private heartbeat(client: pg.Client): Promise<void> {
    const every = this.options.heartbeatMs ?? 10_000;
    const timeout = this.options.heartbeatTimeoutMs ?? 5_000;
    return new Promise<void>((resolve) => {
      const beat = () => {
        if (this.client !== client) return;
        const deadline = setTimeout(resolve, timeout);
        deadline.unref();
        client.query("SELECT 1").then(
          () => {
            clearTimeout(deadline);
            schedule();
          },
          () => {
            clearTimeout(deadline);
            resolve();
          },
        );
      };
      const schedule = () => setTimeout(beat, every).unref();
      schedule();
    });
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.interrupt = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
