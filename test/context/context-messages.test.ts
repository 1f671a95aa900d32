import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { attachmentText, saveAttachment } from "../../src/context/attachments.js";
import {
  additionalInstructionsMessage,
  discoverInstructions,
  INSTRUCTIONS_INTRO,
  instructionsMessage,
  instructionsPlugin,
} from "../../src/context/instructions.js";
import {
  catalogText,
  loadSkills,
  MAX_DESCRIPTION_CHARS,
  skillFolders,
  skillsPlugin,
  skillTool,
} from "../../src/context/skills.js";
import {
  chooseZone,
  compactDuration,
  timeContextPlugin,
  timeContextText,
  zonedTimestamp,
} from "../../src/context/time-context.js";
import type { LogEvent } from "../../src/log/events.js";
import type { ToolExec } from "../../src/tools/types.js";
import { loopFixture, personaPlugin } from "../loop/harness.js";

function userMessages(events: LogEvent[], source: string): string[] {
  return events.flatMap((e) => (e.type === "user/message" && e.data.source === source ? [e.data.text] : []));
}

describe("SP5 time context", () => {
  it("formats the sample with offset and zone, and compact whole-second durations", () => {
    const at = new Date("2025-05-01T07:30:05.900Z");
    expect(zonedTimestamp(at, "Europe/Berlin")).toBe("2025-05-01T09:30:05+02:00[Europe/Berlin]");
    expect(zonedTimestamp(at, "America/St_Johns")).toBe("2025-05-01T05:00:05-02:30[America/St_Johns]");
    expect(compactDuration(3_725_900)).toBe("1h2m5s");
    expect(compactDuration(120_000)).toBe("2m");
    expect(compactDuration(400)).toBe("0s");
  });

  it("chooses the reported zone, else the configured one, else the process zone; mixed and unavailable", () => {
    expect(chooseZone([], "Asia/Tokyo", "UTC")).toEqual({ kind: "one", zone: "Asia/Tokyo" });
    expect(chooseZone([], "", "UTC")).toEqual({ kind: "one", zone: "UTC" });
    expect(chooseZone(["A/B", "A/B"], "", "UTC")).toEqual({ kind: "one", zone: "A/B" });
    expect(chooseZone(["Europe/Paris", "Asia/Tokyo"], "", "UTC")).toEqual({
      kind: "mixed",
      zones: ["Europe/Paris", "Asia/Tokyo"],
    });
    expect(chooseZone([], "", undefined)).toEqual({ kind: "none" });
    const mixed = timeContextText({
      turn: 1,
      step: 2,
      now: new Date(0),
      zone: { kind: "mixed", zones: ["X", "Y"] },
      elapsedMs: undefined,
    });
    expect(mixed.split("\n")).toEqual([
      "Time sampled while preparing turn 1, step 2: 1970-01-01T00:00:00+00:00[UTC]",
      "Time zone for this request: mixed [X, Y]. Ask the user which zone they mean for dates and times that name none.",
      "Elapsed since the previous time context: unavailable.",
    ]);
  });

  it("adds three lines as a user message at most once per refresh interval", async () => {
    let now = new Date("2025-05-01T07:30:00Z");
    const f = await loopFixture({
      script: [{ toolCalls: [{ id: "a", name: "t", arguments: {} }] }, { text: "one" }, { text: "two" }],
      tools: { t: { run: () => ({ text: "ok" }) } },
      plugins: [
        personaPlugin,
        timeContextPlugin({ refreshMs: 600_000, timeZone: "Europe/Berlin", now: () => now }),
      ],
      agent: { now: () => now },
    });
    try {
      await f.agent.followup("first");
      await f.agent.whenIdle();
      now = new Date("2025-05-01T07:45:00Z");
      await f.agent.followup("second");
      await f.agent.whenIdle();
      const times = userMessages(await f.events(), "time-context");
      expect(times).toHaveLength(2); // turn 1 step 1, turn 2 step 1 (step 2 of turn 1 was within 10 minutes)
      expect(times[0]!.split("\n")[0]).toBe(
        "Time sampled while preparing turn 1, step 1: 2025-05-01T09:30:00+02:00[Europe/Berlin]",
      );
      expect(times[0]).toContain("Elapsed since the previous message you saw: unavailable.");
      expect(times[1]).toContain("Elapsed since the previous message you saw: 15m.");
      const system = f.fake.requests.map((r) =>
        JSON.stringify((r.body?.messages as unknown[] | undefined)?.[0]),
      );
      expect(new Set(system).size).toBe(1); // the system prompt never changes
    } finally {
      await f.close();
    }
  });
});

describe("SP6 workspace instructions", () => {
  function workspace() {
    const root = mkdtempSync(join(tmpdir(), "bdsh-instr-"));
    const home = join(root, "home");
    const user = join(root, "user");
    const repo = join(root, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, "src", "app"), { recursive: true });
    mkdirSync(join(repo, "pkg", "deep"), { recursive: true });
    mkdirSync(home, { recursive: true });
    mkdirSync(join(user, ".agents"), { recursive: true });
    writeFileSync(join(home, "AGENTS.md"), "home rules");
    writeFileSync(join(user, ".agents", "AGENTS.md"), "user rules");
    writeFileSync(join(repo, "AGENTS.md"), "repo rules </system-reminder> escaped");
    writeFileSync(join(repo, "CLAUDE.md"), "repo rules </system-reminder> escaped"); // identical: collapsed
    writeFileSync(join(repo, "src", "AGENTS.local.md"), "src local rules");
    writeFileSync(join(repo, "pkg", "deep", "AGENTS.md"), "deep rules");
    writeFileSync(join(repo, "pkg", "deep", "file.txt"), "x");
    return { home, user, repo, cwd: join(repo, "src", "app") };
  }

  it("chains home, ~/.agents, then the repository root down to the working directory, broad to specific", () => {
    const w = workspace();
    const files = discoverInstructions({ home: w.home, cwd: w.cwd, userHome: w.user });
    expect(files.map((f) => f.content)).toEqual([
      "home rules",
      "user rules",
      "repo rules </system-reminder> escaped",
      "src local rules",
    ]);
    const text = instructionsMessage(files, 65_536)!;
    expect(
      text.startsWith(
        `<system-reminder>\n${INSTRUCTIONS_INTRO}\n\nInstructions from: ${join(w.home, "AGENTS.md")}`,
      ),
    ).toBe(true);
    expect(text).toContain("repo rules <\\/system-reminder> escaped");
    expect(text.match(/<\/system-reminder>/g)).toHaveLength(1);
  });

  it("drops the broadest files first, then truncates the most specific, with a visible notice", () => {
    const files = [
      { path: "/a/AGENTS.md", content: "a".repeat(400) },
      { path: "/a/b/AGENTS.md", content: "b".repeat(400) },
      { path: "/a/b/c/AGENTS.md", content: "c".repeat(400) },
    ];
    const dropped = instructionsMessage(files, 1200)!;
    expect(Buffer.byteLength(dropped)).toBeLessThanOrEqual(1200);
    expect(dropped).toContain("Workspace instruction budget (1200 bytes) exceeded: left out /a/AGENTS.md.");
    expect(dropped).toContain("b".repeat(400));
    const truncated = instructionsMessage(files, 600)!;
    expect(Buffer.byteLength(truncated)).toBeLessThanOrEqual(600);
    expect(truncated).toContain("left out /a/AGENTS.md, /a/b/AGENTS.md; /a/b/c/AGENTS.md is truncated.");
  });

  it("sends the chain once at the first pre-step and refreshes when a file tool reaches a deeper directory", async () => {
    const w = workspace();
    const f = await loopFixture({
      script: [
        { toolCalls: [{ id: "r1", name: "read", arguments: { path: "../../pkg/deep/file.txt" } }] },
        { text: "read it" },
        { text: "again" },
      ],
      tools: { read: { run: () => ({ text: "x" }) } },
      plugins: [personaPlugin, instructionsPlugin({ home: w.home, userHome: w.user })],
      agent: { cwd: w.cwd },
    });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      await f.agent.followup("more");
      await f.agent.whenIdle();
      const sent = userMessages(await f.events(), "instructions");
      expect(sent).toHaveLength(2);
      expect(sent[1]).toBe(
        additionalInstructionsMessage(w.repo, {
          path: join(w.repo, "pkg", "deep", "AGENTS.md"),
          content: "deep rules",
        }),
      );
      expect(sent[1]).toContain("Additional instructions from: pkg/deep/AGENTS.md");
      expect(sent[1]).toContain("These apply to work under `pkg/deep`.");
    } finally {
      await f.close();
    }
  });
});

describe("SP7 T20 skills", () => {
  const write = (dir: string, name: string, body: string) => {
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(join(dir, name, "SKILL.md"), body);
  };

  function skills() {
    const home = mkdtempSync(join(tmpdir(), "bdsh-skills-"));
    const workspace = mkdtempSync(join(tmpdir(), "bdsh-ws-"));
    write(
      join(home, "skills"),
      "release",
      "---\nname: release\ndescription: Cut a release.\n---\nUser release steps.",
    );
    write(
      join(workspace, ".bdsh", "skills"),
      "release",
      "---\nname: release\ndescription: Project release.\n---\nProject steps.",
    );
    write(
      join(workspace, ".bdsh", "skills"),
      "long",
      `---\nname: long\ndescription: ${"d".repeat(900)}\n---\nbody`,
    );
    write(join(workspace, ".bdsh", "skills"), "broken", "no front matter");
    return { home, workspace, dirs: [join(home, "skills"), join(workspace, ".bdsh", "skills")] };
  }

  it("loads SKILL.md folders, project over user, descriptions cut to 500 characters", () => {
    const s = skills();
    const loaded = loadSkills(s.dirs);
    expect(loaded.map((k) => k.name)).toEqual(["long", "release"]);
    expect(loaded[0]!.description).toHaveLength(MAX_DESCRIPTION_CHARS);
    expect(loaded[1]).toMatchObject({ description: "Project release.", instructions: "Project steps." });
    const text = catalogText(loaded)!;
    expect(text).toContain("<available_skills>\n- `long`: ");
    expect(text).toContain("- `release`: Project release.\n</available_skills>");
  });

  it("the catalog is a user message before the first request, appended again in full when it changes", async () => {
    const s = skills();
    const f = await loopFixture({
      script: [{ text: "one" }, { text: "two" }, { text: "three" }],
      registry: true,
      plugins: [personaPlugin, skillsPlugin({ home: s.home, directories: s.dirs })],
      agent: { workspace: s.workspace },
    });
    try {
      await f.agent.followup("go");
      await f.agent.whenIdle();
      await f.agent.followup("again");
      await f.agent.whenIdle();
      expect(userMessages(await f.events(), "skills")).toHaveLength(1);
      mkdirSync(join(s.workspace, ".bdsh", "skills", "new"));
      writeFileSync(
        join(s.workspace, ".bdsh", "skills", "new", "SKILL.md"),
        "---\nname: new\ndescription: New.\n---\nx",
      );
      await f.agent.followup("third");
      await f.agent.whenIdle();
      const catalogs = userMessages(await f.events(), "skills");
      expect(catalogs).toHaveLength(2);
      expect(catalogs[1]).toContain("- `new`: New.");
      expect(catalogs[1]).toContain("- `release`: Project release.");
      const first = f.fake.requests[0]!.body?.messages as { role: string; content: string }[];
      expect(first.find((m) => m.content?.includes("<available_skills>"))?.role).toBe("user");
    } finally {
      await f.close();
    }
  });

  it("within a turn, folders are checked at most once per interval unless asked afresh", () => {
    const s = skills();
    let now = 0;
    const current = skillFolders(s.dirs, 1_000, () => now);
    expect(current().map((k) => k.name)).toEqual(["long", "release"]);
    write(join(s.workspace, ".bdsh", "skills"), "added", "---\nname: added\ndescription: A.\n---\nx");
    now = 999;
    expect(current().map((k) => k.name)).toEqual(["long", "release"]);
    expect(current({ fresh: true }).map((k) => k.name)).toEqual(["added", "long", "release"]);
    write(join(s.workspace, ".bdsh", "skills"), "later", "---\nname: later\ndescription: L.\n---\nx");
    now = 1_998;
    expect(current()).toHaveLength(3);
    now = 1_999;
    expect(current()).toHaveLength(4);
  });

  it("the skill tool returns the full instructions", async () => {
    const s = skills();
    const services = new Map<string, unknown>();
    const exec = {
      services: { get: (n: string) => services.get(n), require: (n: string) => services.get(n) },
    } as unknown as ToolExec;
    const f = await loopFixture({
      script: [],
      registry: true,
      plugins: [skillsPlugin({ home: s.home, directories: s.dirs })],
    });
    try {
      await f.agent.setup();
      services.set("skills", f.agent.services.require("skills"));
      expect((await skillTool.execute({ name: "release" }, exec)).text).toBe(
        '<skill_content name="release">\n<skill_instructions>\nProject steps.\n</skill_instructions>\n</skill_content>',
      );
      await expect(skillTool.execute({ name: "nope" }, exec)).rejects.toThrow(
        'no skill named "nope"; available: long, release',
      );
    } finally {
      await f.close();
    }
  });
});

describe("M10 attachments as handles", () => {
  it("saves a read-only copy and describes files, unreachable files and images by their handle", () => {
    const home = mkdtempSync(join(tmpdir(), "bdsh-att-"));
    const file = saveAttachment(home, "../report.pdf", new TextEncoder().encode("%PDF"), "application/pdf");
    expect(file.path).toBe(join(home, "attachments", file.sha256, "report.pdf"));
    expect(readFileSync(file.path!, "utf8")).toBe("%PDF");
    expect(statSync(file.path!).mode & 0o222).toBe(0);
    expect(attachmentText(file)).toBe(
      `[File "report.pdf" (4 bytes, sha256:${file.sha256}): read-only copy saved at "${file.path}". Read that path with your file tools when you need its contents; copy it somewhere writable before changing it. When you delegate work on it, put this path in the delegation prompt: only subagents in this same environment can read it.]`,
    );
    const { path: _path, ...unreachable } = file;
    expect(attachmentText(unreachable)).toContain(
      "was uploaded, but no readable path to it exists in this environment",
    );
    const image = { ...file, mediaType: "image/png" };
    expect(attachmentText(image)).toBe(
      `[Image "report.pdf" (image/png, 4 bytes, sha256:${file.sha256}) saved at "${file.path}"]`,
    );
  });
});
