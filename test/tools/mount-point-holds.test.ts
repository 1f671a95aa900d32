/**
 * A mount point the sandbox made is removed only when no bdsh process holds it any more
 * (src/tools/terminal/mount-point-holds.ts): another process's hold keeps it, a dead process's does not,
 * and a directory a person made is never taken over.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  holdMadeMountPoint,
  joinMountPoint,
  releaseMountPoint,
} from "../../src/tools/terminal/mount-point-holds.js";

const MODULE = new URL("../../src/tools/terminal/mount-point-holds.ts", import.meta.url).href;
let child: ChildProcess | undefined;

afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
});

/** Another process that joins the mount point at `path` and stays; resolves with what joining returned. */
function otherProcessJoins(path: string): Promise<string> {
  child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `const { joinMountPoint } = await import(${JSON.stringify(MODULE)});
       console.log(String(joinMountPoint(${JSON.stringify(path)})));
       setInterval(() => {}, 1000);`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const running = child;
  return new Promise((resolve, reject) => {
    let out = "";
    running.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(out.trim());
    });
    running.on("exit", (code) => reject(new Error(`the other process exited (${code}) before joining`)));
  });
}

const exited = (process: ChildProcess) => new Promise((resolve) => process.once("exit", resolve));

describe("mount points held across processes", () => {
  it("stays while another process holds it, and goes once the last live holder releases it", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "bdsh-holds-")), ".bdsh");
    mkdirSync(path);
    holdMadeMountPoint(path);
    expect(await otherProcessJoins(path)).toBe("true");

    const removed: string[] = [];
    releaseMountPoint(path, () => removed.push("first"));
    expect(removed).toEqual([]); // the other process's sandbox still uses it

    // The other process dies without releasing: its hold is gone with it.
    const other = child!;
    other.kill("SIGKILL");
    await exited(other);
    expect(joinMountPoint(path)).toBe(true); // the record is still there, so this process may hold it again
    releaseMountPoint(path, () => removed.push("second"));
    expect(removed).toEqual(["second"]);
    expect(joinMountPoint(path)).toBe(false); // no record left: as if a person made it
  });

  it("never holds a directory no bdsh process made", () => {
    const path = join(mkdtempSync(join(tmpdir(), "bdsh-holds-")), ".bdsh");
    mkdirSync(path);
    expect(joinMountPoint(path)).toBe(false);
  });
});
