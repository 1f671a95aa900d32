import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { derived, fileText } from "../../src/context/file-snapshots.js";

const dir = mkdtempSync(join(tmpdir(), "bdsh-snapshots-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("file snapshots shared by the agents of a process", () => {
  it("reads a file again when it changed, and says when it is gone", () => {
    const path = join(dir, "AGENTS.md");
    expect(fileText(path)).toBeUndefined();
    writeFileSync(path, "first");
    expect(fileText(path)).toBe("first");
    writeFileSync(path, "second, longer");
    expect(fileText(path)).toBe("second, longer");
    rmSync(path);
    expect(fileText(path)).toBeUndefined();
    expect(fileText(dir)).toBeUndefined(); // a directory is no file
    expect(fileText(join(dir, "missing", "AGENTS.md"))).toBeUndefined();
  });

  it("derives a value once per version of the file", () => {
    const path = join(dir, "SKILL.md");
    writeFileSync(path, "one");
    let made = 0;
    const parse = (text: string) => {
      made++;
      return text.toUpperCase();
    };
    expect(derived(path, "skill", parse)).toEqual({ text: "one", value: "ONE" });
    expect(derived(path, "skill", parse)?.value).toBe("ONE");
    expect(made).toBe(1);
    writeFileSync(path, "two!");
    expect(derived(path, "skill", parse)?.value).toBe("TWO!");
    expect(made).toBe(2);
  });
});
