import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listDirectory } from "../../src/tools/directory-listing.js";

const sorted = async (path: string) => [...(await listDirectory(path))].sort();

describe("a plugin folder's listing, reused until the folder changes", () => {
  it("sees a folder appear, an entry added or removed, and the folder replaced, on the next call", async () => {
    const root = mkdtempSync(join(tmpdir(), "bdsh-listing-"));
    const folder = join(root, "plugins");
    expect(await sorted(folder)).toEqual([]);
    expect(await sorted(folder)).toEqual([]);
    mkdirSync(folder);
    writeFileSync(join(folder, "a.mjs"), "");
    expect(await sorted(folder)).toEqual(["a.mjs"]);
    writeFileSync(join(folder, "b.mjs"), "");
    expect(await sorted(folder)).toEqual(["a.mjs", "b.mjs"]);
    rmSync(join(folder, "a.mjs"));
    expect(await sorted(folder)).toEqual(["b.mjs"]);
    const other = join(root, "other");
    mkdirSync(other);
    writeFileSync(join(other, "c.mjs"), "");
    rmSync(folder, { recursive: true });
    renameSync(other, folder);
    expect(await sorted(folder)).toEqual(["c.mjs"]);
    rmSync(folder, { recursive: true });
    expect(await sorted(folder)).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });

  it("sees two entries added one right after the other (file times are coarse: one tick can stamp both)", async () => {
    const folder = mkdtempSync(join(tmpdir(), "bdsh-listing-"));
    writeFileSync(join(folder, "a.mjs"), "");
    expect(await sorted(folder)).toEqual(["a.mjs"]);
    writeFileSync(join(folder, "b.mjs"), "");
    expect(await sorted(folder)).toEqual(["a.mjs", "b.mjs"]);
    rmSync(folder, { recursive: true, force: true });
  });

  it("a caller sorting its copy does not change what the next caller gets", async () => {
    const folder = mkdtempSync(join(tmpdir(), "bdsh-listing-"));
    for (const name of ["z.mjs", "a.mjs", "m.mjs"]) writeFileSync(join(folder, name), "");
    const first = await listDirectory(folder);
    const copy = [...first].sort().reverse();
    expect(copy[0]).toBe("z.mjs");
    expect([...(await listDirectory(folder))].sort()).toEqual(["a.mjs", "m.mjs", "z.mjs"]);
    rmSync(folder, { recursive: true, force: true });
  });
});
