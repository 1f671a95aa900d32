/**
 * The approval key (issue 30, src/config/approval-key.ts): where it comes from, how it is made, and that a
 * race between processes making it leaves one key that every one of them uses.
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { APPROVAL_KEY_FILE, ApprovalKeyError, loadApprovalKey } from "../../src/config/approval-key.js";
import { ConfigError } from "../../src/config/load.js";
import { EnvironmentPolicy } from "../../src/tools/terminal/child-env.js";
import { fixtureArgv } from "../support/fixtures.js";

const run = promisify(execFile);
const freshHome = () => join(mkdtempSync(join(tmpdir(), "bdsh-approval-key-")), "home");

describe("the approval key (issue 30)", () => {
  it("BDSH_APPROVAL_KEY wins and no file is made; a short one is refused with a clear error", () => {
    const home = freshHome();
    const value = "k".repeat(40);
    expect(loadApprovalKey({ env: { BDSH_APPROVAL_KEY: value }, home }).toString("utf8")).toBe(value);
    expect(() => readdirSync(home)).toThrow(/ENOENT/);
    expect(() => loadApprovalKey({ env: { BDSH_APPROVAL_KEY: "short" }, home })).toThrow(ApprovalKeyError);
    expect(() => loadApprovalKey({ env: { BDSH_APPROVAL_KEY: "short" }, home })).toThrow(ConfigError); // exit 2
    expect(() => loadApprovalKey({ env: { BDSH_APPROVAL_KEY: "short" }, home })).toThrow(/at least 32/);
  });

  it("without it, $BDSH_HOME/approval.key is made once, mode 0600, and read back the same", () => {
    const home = freshHome();
    const first = loadApprovalKey({ env: { BDSH_HOME: home } });
    const file = join(home, APPROVAL_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(first.toString("utf8")).toMatch(/^[0-9a-f]{64}$/);
    expect(loadApprovalKey({ env: {}, home })).toEqual(first);
    expect(readdirSync(home)).toEqual([APPROVAL_KEY_FILE]); // no temporary file left behind
  });

  it("a key file others may read, a symlink or an empty file is refused, never trusted or replaced", () => {
    const home = freshHome();
    const key = loadApprovalKey({ env: {}, home });
    const file = join(home, APPROVAL_KEY_FILE);
    chmodSync(file, 0o644);
    expect(() => loadApprovalKey({ env: {}, home })).toThrow(/chmod 600/);
    chmodSync(file, 0o600);
    expect(loadApprovalKey({ env: {}, home })).toEqual(key);

    const linked = freshHome();
    loadApprovalKey({ env: {}, home: linked });
    const elsewhere = join(linked, "elsewhere");
    writeFileSync(elsewhere, "x".repeat(64), { mode: 0o600 });
    unlinkSync(join(linked, APPROVAL_KEY_FILE));
    symlinkSync(elsewhere, join(linked, APPROVAL_KEY_FILE));
    expect(() => loadApprovalKey({ env: {}, home: linked })).toThrow(/regular file/);

    const empty = freshHome();
    loadApprovalKey({ env: {}, home: empty });
    writeFileSync(join(empty, APPROVAL_KEY_FILE), "\n", { mode: 0o600 });
    expect(() => loadApprovalKey({ env: {}, home: empty })).toThrow(/delete it/);
    expect(readFileSync(join(empty, APPROVAL_KEY_FILE), "utf8")).toBe("\n");
  });

  it("eight processes making it at once all end with the one key in the file", async () => {
    const home = freshHome();
    const argv = fixtureArgv(join(import.meta.dirname, "fixtures", "approval-key.ts"));
    const keys = await Promise.all(
      Array.from({ length: 8 }, () => run(process.execPath, [...argv, home]).then((r) => r.stdout)),
    );
    const stored = readFileSync(join(home, APPROVAL_KEY_FILE), "utf8").trim();
    expect(new Set(keys)).toEqual(new Set([Buffer.from(stored, "utf8").toString("hex")]));
    expect(statSync(join(home, APPROVAL_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(readdirSync(home)).toEqual([APPROVAL_KEY_FILE]);
  });

  it("BDSH_APPROVAL_KEY never reaches a child, whatever terminal.pass_env_keys says", () => {
    const policy = new EnvironmentPolicy({ pass: ["BDSH_APPROVAL_KEY", "*"] });
    const key = "k".repeat(40);
    const env = policy.childEnvironment({ BDSH_APPROVAL_KEY: key, PATH: "/usr/bin" });
    expect(env).toEqual({ PATH: "/usr/bin" });
    expect(policy.secretValues({ BDSH_APPROVAL_KEY: key })).toContain(key);
  });
});
