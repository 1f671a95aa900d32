/**
 * One HTTP/1.1 exchange on a raw socket: the request is written exactly as given (a malformed escape, a
 * header Node's client would refuse to send, a body of any shape), and the first response is read back.
 * The exchange ends at the response's head for a 1xx/2xx/3xx answer or a HEAD request (a 101 upgrade or an
 * event stream never ends by itself), and after its whole body otherwise (an error's body is what a test
 * checks).
 */
import { connect } from "node:net";
import { guard } from "../support/wait.js";

export type RawAnswer = { status: number; head: string; text: string };

export function rawExchange(
  url: string,
  request: string | Buffer,
  options: { headOnly?: boolean; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(request));
    let buffer = Buffer.alloc(0);
    let settled = false;
    const timer = setTimeout(
      () =>
        finish(new Error(`no response within the guard to ${JSON.stringify(String(request).slice(0, 200))}`)),
      guard(options.timeoutMs ?? 15_000),
    );
    const finish = (outcome: RawAnswer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const complete = (): boolean => {
      const cut = buffer.indexOf("\r\n\r\n");
      if (cut < 0) return false;
      const head = buffer.subarray(0, cut).toString("latin1");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      const body = buffer.subarray(cut + 4);
      if (status < 400 || options.headOnly) {
        finish({ status, head, text: "" });
        return true;
      }
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? Number.NaN);
      if (!Number.isNaN(length) && body.length < length) return false;
      finish({ status, head, text: body.toString("utf8") });
      return true;
    };
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      complete();
    });
    socket.on("error", (error) => {
      if (!complete()) finish(error);
    });
    socket.on("close", () => {
      if (!complete())
        finish(new Error(`closed without a full response: ${JSON.stringify(buffer.toString("latin1"))}`));
    });
  });
}
