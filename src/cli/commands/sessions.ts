/**
 * `bdsh sessions list | show ID | events ID | resume ID | fork ID | archive [--undo] ID`. Every ID may be a
 * unique prefix (session-select.ts). `list` shows this workspace's sessions; `--all` shows every
 * workspace's, `--archived` includes archived ones.
 */
import type { Command } from "commander";
import type { Config } from "../../config/schema.js";
import type { LogEvent } from "../../log/events.js";
import { eventJson } from "../../log/serialize.js";
import { surfaceMessagesOf } from "../../log/surface.js";
import { usageOf } from "../../log/usage.js";
import { forkSession } from "../../loop/fork.js";
import { costOf, formatUsage, type Price, priceFor, priceFromConfig } from "../../model/pricing.js";
import { sessionUsage } from "../../presets/session-usage.js";
import type { SessionRow, Store } from "../../store/store.js";
import { cliEnvironment, type GlobalOptions, withStore } from "../environment.js";
import { usageError } from "../errors.js";
import type { Output } from "../output.js";
import { sanitize } from "../render/terminal-text.js";
import {
  clipLines,
  findSession,
  lastAssistantText,
  refuseArchived,
  sessionWorkspace,
  workspaceOf,
} from "../session-select.js";
import type { SessionFlags } from "../shared-options.js";
import { shortId } from "../short-id.js";
import { addRunOptions, type RunOptions, runCommand } from "./run.js";

export function registerSessions(
  program: Command,
  output: Output,
  setExitCode: (code: number) => void,
): void {
  const sessions = program.command("sessions").description("inspect stored sessions");

  sessions
    .command("list")
    .description("this workspace's sessions, last active first (the one --continue picks on top)")
    .option("--limit <n>", "how many", "50")
    .option("--all", "every workspace's sessions, with a WORKSPACE column")
    .option("--archived", "include archived sessions")
    .option("--json", "one JSON object per session")
    .action(
      async (
        options: { limit: string; all?: boolean; archived?: boolean; json?: boolean },
        command: Command,
      ) => {
        const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
        await withStore(environment, async (store) => {
          const limit = Number(options.limit);
          // Last activity first over every session, as `--continue` picks: the store orders them.
          const rows = await store.listSessions({
            order: "activity",
            limit,
            includeArchived: !!options.archived,
            ...(options.all ? {} : { workspace: environment.cwd }),
          });
          if (options.json) {
            for (const row of rows) output.out(JSON.stringify(row));
            return;
          }
          output.err(
            `store: ${store.kind} (${store.location})${options.all ? "" : `; workspace ${environment.cwd} (--all: every workspace)`}`,
          );
          if (rows.length === 0) {
            output.out("No sessions yet.");
            return;
          }
          output.out(formatTable(rows, !!options.all));
        });
      },
    );

  sessions
    .command("show <id>")
    .description("a session's details and a summary of its log")
    .option("--json", "the session row as JSON")
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        const row = await findSession(store, id);
        if (options.json) {
          output.out(JSON.stringify(row));
          return;
        }
        const events = await store.read(row.id);
        const price = sessionPrice(events, environment.loaded.config.model);
        output.out(sanitize(describeSession(row, events, await usageLines(store, row, events, price))));
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
        const row = await findSession(store, id);
        const events = await store.read(row.id, { after: Number(options.after) });
        for (const event of events)
          output.out(options.json ? eventJson(event) : sanitize(describeEvent(event)));
      });
    });

  addRunOptions(
    sessions
      .command("resume <id>")
      .description(
        "continue a session in its own workspace; without a prompt, only close a turn a crash left open",
      ),
  )
    .argument("[prompt...]", "a new task for the session")
    .action(async (id: string, words: string[], options: RunOptions, command: Command) => {
      const prompt = words.length ? words.join(" ") : undefined;
      const globals = command.optsWithGlobals<GlobalOptions & RunOptions & SessionFlags>();
      if (globals.continue || globals.last || options.session)
        throw usageError("resume takes the session as its ID argument, not --session/--continue/--last");
      // The session's own workspace, so its project configuration loads too (not the current
      // directory's); an explicit --cwd wins.
      const chosen = await withStore(cliEnvironment(globals), async (store) => {
        const row = await findSession(store, id);
        refuseArchived(row);
        const cwd = cliEnvironment(globals).cwd;
        return { id: row.id, workspace: sessionWorkspace(row, globals.cwd !== undefined, cwd, output) };
      });
      setExitCode(
        await runCommand(
          prompt,
          { ...options, session: chosen.id },
          { ...globals, cwd: chosen.workspace },
          output,
        ),
      );
    });

  sessions
    .command("fork <id>")
    .description("a new session seeded with the completed turns of ID")
    .action(async (id: string, _options: unknown, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        const row = await findSession(store, id);
        const child = await forkSession(store, row.id);
        output.out(child.id);
      });
    });

  sessions
    .command("archive <id>")
    .description("freeze a session: it cannot be resumed or sent to until restored")
    .option("--undo", "restore an archived session")
    .action(async (id: string, options: { undo?: boolean }, command: Command) => {
      const environment = cliEnvironment(command.optsWithGlobals<GlobalOptions>());
      await withStore(environment, async (store) => {
        const row = await findSession(store, id);
        await store.updateSession(row.id, { archived: !options.undo });
        output.err(
          options.undo
            ? `restored ${row.id}`
            : `archived ${row.id}; \`bdsh sessions archive --undo ${row.id}\` restores it`,
        );
      });
    });
}

function formatTable(rows: SessionRow[], withWorkspace: boolean): string {
  const lines = [["ID", "UPDATED", "STATUS", "TITLE", ...(withWorkspace ? ["WORKSPACE"] : [])]];
  for (const row of rows) {
    lines.push([
      shortId(row.id),
      localTime(row.updatedAt),
      row.archived ? `${row.status} (archived)` : row.status,
      clip(sanitize(row.title ?? "").replace(/\n/g, " "), 50),
      ...(withWorkspace ? [sanitize(workspaceOf(row) ?? "-")] : []),
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

/** `2026-12-03 23:05` in UTC, as the store keeps it. */
function localTime(iso: string): string {
  return iso.replace("T", " ").slice(0, 16);
}

function describeSession(row: SessionRow, events: LogEvent[], usage: string[]): string {
  const turns = events.filter((e) => e.type === "turn/start").length;
  const lastEnd = events.findLast((e) => e.type === "turn/end");
  const surface = surfaceMessagesOf(events);
  const lastAssistant = events.findLast((e) => e.type === "assistant/message");
  const model =
    lastAssistant?.type === "assistant/message"
      ? `${lastAssistant.data.model} (${lastAssistant.data.provider})`
      : "(no reply yet)";
  const reply = lastAssistantText(events);
  return [
    `id:        ${row.id} (short: ${shortId(row.id)})`,
    `title:     ${row.title ?? "(none)"}`,
    `kind:      ${row.kind}${row.parentId ? ` (parent ${row.parentId})` : ""}`,
    `model:     ${model}`,
    `workspace: ${workspaceOf(row) ?? "(none)"}`,
    `status:    ${row.status}${row.archived ? ", archived" : ""}`,
    `created:   ${row.createdAt}`,
    `updated:   ${row.updatedAt}`,
    `events:    ${row.lastSeq}`,
    `turns:     ${turns}${lastEnd?.type === "turn/end" ? ` (last ended: ${lastEnd.data.reason})` : ""}`,
    `messages:  ${surface.length} model-visible`,
    ...usage,
    ...(reply === undefined ? [] : ["last message:", indent(clipLines(reply, SHOW_REPLY_LINES))]),
  ].join("\n");
}

/** How many lines of the last reply `show` prints. */
const SHOW_REPLY_LINES = 8;

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/**
 * M20: the price of the model the session last replied with: `model.price` applies when that is the
 * configured model, else the table's row; undefined (cost unknown) when neither prices it.
 */
function sessionPrice(
  events: readonly LogEvent[],
  configured: Pick<Config["model"], "provider" | "id" | "price">,
): Price | undefined {
  const last = events.findLast((e) => e.type === "assistant/message");
  if (last?.type !== "assistant/message") return priceFromConfig(configured);
  const { provider, model } = last.data;
  if (provider === configured.provider && model === configured.id) return priceFromConfig(configured);
  return priceFor(provider, model);
}

/**
 * M20: the session's own usage (a fork's copied events not counted) and, when it has children (S1
 * subagents, forks), the total with them rolled up. Cost only where the price is known, else "cost unknown".
 */
async function usageLines(
  store: Store,
  row: SessionRow,
  events: readonly LogEvent[],
  price: Price | undefined,
): Promise<string[]> {
  const own = usageOf(events).session;
  const lines = [`usage:     ${formatUsage(own, costOf(own, price))}`];
  const children = await store.listSessions({ parentId: row.id, includeArchived: true, limit: 1 });
  if (children.length > 0) {
    const total = await sessionUsage(store, row.id, price);
    lines.push(`  with children: ${formatUsage(total.withChildren, total.cost)}`);
  }
  return lines;
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
