/**
 * `bdsh sessions list | show ID | events ID [--json]`: read-only views over the store.
 */
import type { Command } from "commander";
import type { LogEvent } from "../../log/events.js";
import { eventJson } from "../../log/serialize.js";
import { surfaceMessagesOf } from "../../log/surface.js";
import { forkSession } from "../../loop/fork.js";
import type { SessionRow, Store } from "../../store/store.js";
import { cliEnvironment, type GlobalOptions, withStore } from "../environment.js";
import { CliError } from "../errors.js";
import type { Output } from "../output.js";
import { addRunOptions, type RunOptions, runCommand } from "./run.js";

export function registerSessions(
  program: Command,
  output: Output,
  setExitCode: (code: number) => void,
): void {
  const sessions = program.command("sessions").description("inspect stored sessions");

  sessions
    .command("list")
    .description("list sessions, newest first")
    .option("--limit <n>", "how many", "50")
    .option("--all", "include archived sessions")
    .option("--json", "one JSON object per session")
    .action(async (options: { limit: string; all?: boolean; json?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        const rows = await store.listSessions({
          limit: Number(options.limit),
          includeArchived: !!options.all,
        });
        if (options.json) {
          for (const row of rows) output.out(JSON.stringify(row));
          return;
        }
        output.err(`store: ${store.kind} (${store.location})`);
        if (rows.length === 0) {
          output.out("No sessions yet.");
          return;
        }
        output.out(formatTable(rows));
      });
    });

  sessions
    .command("show <id>")
    .description("a session's details and a summary of its log")
    .option("--json", "the session row as JSON")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        const row = await requireSession(store, id);
        if (options.json) {
          output.out(JSON.stringify(row));
          return;
        }
        const events = await store.read(row.id);
        output.out(describeSession(row, events));
      });
    });

  sessions
    .command("events <id>")
    .description("a session's durable events")
    .option("--json", "JSON Lines, exactly as stored")
    .option("--after <seq>", "only events after this seq", "0")
    .action(async (id: string, options: { json?: boolean; after: string }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        const row = await requireSession(store, id);
        const events = await store.read(row.id, { after: Number(options.after) });
        for (const event of events) output.out(options.json ? eventJson(event) : describeEvent(event));
      });
    });

  addRunOptions(
    sessions
      .command("resume <id>")
      .description("continue a session; without a prompt, repair an interrupted turn (R1)"),
  )
    .argument("[prompt...]", "a new task for the session")
    .action(async (id: string, words: string[], options: RunOptions, command: Command) => {
      const prompt = words.length ? words.join(" ") : undefined;
      const globals = command.optsWithGlobals<GlobalOptions & RunOptions>();
      setExitCode(await runCommand(prompt, { ...options, session: id }, globals, output));
    });

  sessions
    .command("fork <id>")
    .description("a new session seeded with the completed turns of ID (S1)")
    .action(async (id: string, _options: unknown, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        await requireSession(store, id);
        const child = await forkSession(store, id);
        output.out(child.id);
      });
    });

  sessions
    .command("archive <id>")
    .description("freeze a session: later turns end blocked (L18)")
    .option("--undo", "unarchive")
    .action(async (id: string, options: { undo?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        await requireSession(store, id);
        await store.updateSession(id, { archived: !options.undo });
        output.err(`${options.undo ? "unarchived" : "archived"} ${id}`);
      });
    });
}

async function requireSession(store: Store, id: string): Promise<SessionRow> {
  const row = await store.getSession(id);
  if (!row) throw new CliError("NOT_FOUND", `no session ${id} in ${store.location}`);
  return row;
}

function formatTable(rows: SessionRow[]): string {
  const lines = [["ID", "CREATED", "KIND", "STATUS", "EVENTS", "TITLE"]];
  for (const row of rows) {
    lines.push([
      row.id,
      row.createdAt.replace("T", " ").slice(0, 19),
      row.kind,
      row.archived ? `${row.status} (archived)` : row.status,
      String(row.lastSeq),
      row.title ?? "",
    ]);
  }
  const widths = lines[0]!.map((_, column) => Math.max(...lines.map((line) => line[column]!.length)));
  return lines
    .map((line) =>
      line
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function describeSession(row: SessionRow, events: LogEvent[]): string {
  const turns = events.filter((e) => e.type === "turn/start").length;
  const lastEnd = events.findLast((e) => e.type === "turn/end");
  const surface = surfaceMessagesOf(events);
  return [
    `id:        ${row.id}`,
    `title:     ${row.title ?? "(none)"}`,
    `kind:      ${row.kind}${row.parentId ? ` (parent ${row.parentId})` : ""}`,
    `status:    ${row.status}${row.archived ? ", archived" : ""}`,
    `created:   ${row.createdAt}`,
    `events:    ${row.lastSeq}`,
    `turns:     ${turns}${lastEnd?.type === "turn/end" ? ` (last ended: ${lastEnd.data.reason})` : ""}`,
    `messages:  ${surface.length} model-visible`,
  ].join("\n");
}

function describeEvent(event: LogEvent): string {
  const where =
    event.turn === undefined ? "" : ` t${event.turn}${event.step === undefined ? "" : `.${event.step}`}`;
  return `#${event.seq}${where} ${event.type} ${summaryOf(event)}`.trimEnd();
}

function summaryOf(event: LogEvent): string {
  switch (event.type) {
    case "user/message":
    case "system/message":
    case "developer/message":
      return clip(event.data.text);
    case "assistant/message":
      return clip(
        event.data.blocks
          .map((b) => (b.type === "tool-call" ? `[call ${b.name}]` : b.type === "text" ? b.text : ""))
          .join(" "),
      );
    case "tool/result":
      return `${event.data.name}${event.data.isError ? " (error)" : ""}: ${clip(event.data.text)}`;
    case "turn/end":
      return event.data.reason;
    default:
      return clip(JSON.stringify(event.data));
  }
}

function clip(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
