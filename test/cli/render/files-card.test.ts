import { describe, expect, it } from "vitest";
import { filesCard, openCommand } from "../../../src/cli/render/files-card.js";
import { palette, stripAnsi, visibleWidth } from "../../../src/cli/render/style.js";
import { fileKindOf, formatBytes, presentedFilesOf } from "../../../src/transcript/file-kind.js";

const plain = palette(false);
const files = [
  { path: "out/chart.png", bytes: 12_600, mimeType: "image/png" },
  { path: "report final.pdf", bytes: 2_400_000, mimeType: "application/pdf" },
];

describe("filesCard (T22 present)", () => {
  it("shows each file's path, size and kind, with the command that opens it", () => {
    expect(
      filesCard(files, { workspace: "/work/proj", palette: plain, width: 100, platform: "linux" }),
    ).toEqual([
      "▣ out/chart.png  12 KB  PNG image",
      "  open: xdg-open /work/proj/out/chart.png",
      "▣ report final.pdf  2.3 MB  PDF document",
      "  open: xdg-open '/work/proj/report final.pdf'",
    ]);
  });

  it("uses the platform's opener", () => {
    expect(openCommand("/a/b.png", "darwin")).toBe("open /a/b.png");
    expect(openCommand("C:\\a\\b.png", "win32")).toBe('start "" "C:\\a\\b.png"');
    expect(openCommand("/a/it's.png", "linux")).toBe("xdg-open '/a/it'\\''s.png'");
  });

  it("sanitises escape sequences in a model-chosen name and fits the width", () => {
    const hostile = [{ path: "evil\u001b]0;pwned\u0007\u001b[31m.txt", bytes: 1, mimeType: "text/plain" }];
    const lines = filesCard(hostile, {
      workspace: "/w",
      palette: palette(true),
      width: 24,
      platform: "linux",
    });
    for (const line of lines) {
      const bare = stripAnsi(line);
      expect([...bare].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toBe(false);
      expect(visibleWidth(line)).toBeLessThanOrEqual(23);
    }
  });

  it("reads only files details, and accepts any other shape as none", () => {
    expect(presentedFilesOf({ kind: "files", files })).toEqual(files);
    expect(presentedFilesOf({ kind: "read", path: "x" })).toBeUndefined();
    expect(presentedFilesOf(undefined)).toBeUndefined();
    expect(presentedFilesOf("files")).toBeUndefined();
    expect(presentedFilesOf({ kind: "files", files: "nope" })).toBeUndefined();
  });

  it("names kinds and sizes in words", () => {
    expect(fileKindOf("image/jpeg")).toBe("JPEG image");
    expect(fileKindOf("image/svg+xml")).toBe("SVG image");
    expect(fileKindOf("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")).toBe(
      "spreadsheet",
    );
    expect(fileKindOf("application/vnd.openxmlformats-officedocument.presentationml.presentation")).toBe(
      "slide deck",
    );
    expect(fileKindOf("application/octet-stream")).toBe("file");
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(5 * 1024 ** 3)).toBe("5.0 GB");
  });
});
