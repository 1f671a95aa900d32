/**
 * Shell commands hidden in other programs' own languages (they run commands the shell grammar never sees): awk's `system()` and pipes, sed's
 * `e` command and `s///e` flag, vim's `-c '!…'`, less's `+!…`. Each reader returns the command lines it
 * can read, and `opaque` when the program would run something it cannot read (a command built at run
 * time, sed executing its pattern space): the detector judges the commands and fails closed on opaque.
 *
 * Invariants: every reader is one left-to-right scan of its text (no backtracking regex over the
 * program), and never throws on malformed input: what it cannot parse is opaque.
 */

export type Extracted = { commands: string[]; opaque: boolean };

type AwkToken = { kind: "string" | "word" | "op" | "regex"; text: string };

/** awk string escapes (`\"`, `\\`, `\n`, `\t`, `\/`, octal). */
function awkString(text: string, from: number): { value: string; end: number } {
  let value = "";
  let i = from + 1;
  const escapes: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    "\\": "\\",
    '"': '"',
    "/": "/",
    a: "\x07",
  };
  while (i < text.length && text[i] !== '"') {
    if (text[i] === "\\" && i + 1 < text.length) {
      const next = text[i + 1] as string;
      const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4));
      if (octal) {
        value += String.fromCharCode(Number.parseInt(octal[0], 8));
        i += 1 + octal[0].length;
        continue;
      }
      value += escapes[next] ?? next;
      i += 2;
      continue;
    }
    value += text[i];
    i += 1;
  }
  return { value, end: i + 1 };
}

const REGEX_MAY_FOLLOW = new Set(["", "(", ",", "{", "}", ";", "\n", "!", "~", "&&", "||", "!~", "="]);

function awkTokens(text: string): AwkToken[] {
  const out: AwkToken[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === " " || c === "\t" || c === "\r") {
      i += 1;
    } else if (c === "\\" && text[i + 1] === "\n") {
      i += 2;
    } else if (c === "#") {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (c === '"') {
      const s = awkString(text, i);
      out.push({ kind: "string", text: s.value });
      i = s.end;
    } else if (c === "/" && REGEX_MAY_FOLLOW.has(out[out.length - 1]?.text ?? "")) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && (inClass || text[j] !== "/") && text[j] !== "\n") {
        if (text[j] === "\\") j += 1;
        else if (text[j] === "[") inClass = true;
        else if (text[j] === "]") inClass = false;
        j += 1;
      }
      out.push({ kind: "regex", text: text.slice(i, j + 1) });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_]/.test(text[j] as string)) j += 1;
      out.push({ kind: "word", text: text.slice(i, j) });
      i = j;
    } else {
      const two = text.slice(i, i + 2);
      const op = ["||", "|&", "&&", "!~", "==", "!=", ">=", "<=", ">>"].includes(two) ? two : c;
      out.push({ kind: "op", text: op });
      i += op.length;
    }
  }
  return out;
}

const AWK_BOUNDARY = new Set([";", "\n", "{", "}"]);

/** The commands an awk program runs: `system(…)`, `print … | cmd`, `cmd | getline`, `|&` coprocesses. */
export function awkCommands(program: string): Extracted {
  const tokens = awkTokens(program);
  const commands: string[] = [];
  let opaque = false;
  /** String literals from `from` up to a token in `stop` (concatenation only); `undefined` otherwise. */
  const literal = (from: number, step: 1 | -1, stop: (t: AwkToken) => boolean): string | undefined => {
    const parts: string[] = [];
    for (let k = from; k >= 0 && k < tokens.length; k += step) {
      const t = tokens[k] as AwkToken;
      if (stop(t)) break;
      if (t.kind !== "string") return undefined;
      if (step === 1) parts.push(t.text);
      else parts.unshift(t.text);
    }
    return parts.length > 0 ? parts.join("") : undefined;
  };
  for (let k = 0; k < tokens.length; k += 1) {
    const t = tokens[k] as AwkToken;
    if (t.kind === "word" && t.text === "system" && tokens[k + 1]?.text === "(") {
      let depth = 0;
      let end = k + 1;
      for (; end < tokens.length; end += 1) {
        const text = (tokens[end] as AwkToken).text;
        if (text === "(") depth += 1;
        else if (text === ")" && --depth === 0) break;
      }
      const command = literal(k + 2, 1, (x) => x.kind === "op" && x.text === ")");
      if (command === undefined) opaque = true;
      else commands.push(command);
      k = end;
    } else if (t.kind === "op" && (t.text === "|" || t.text === "|&")) {
      if (tokens[k + 1]?.text === "getline") {
        const command = literal(k - 1, -1, (x) => x.kind === "op" && AWK_BOUNDARY.has(x.text));
        if (command === undefined) opaque = true;
        else commands.push(command);
      } else {
        const command = literal(
          k + 1,
          1,
          (x) => x.kind === "op" && (AWK_BOUNDARY.has(x.text) || x.text === ")"),
        );
        if (command === undefined) opaque = true;
        else commands.push(command);
      }
    }
  }
  return { commands, opaque };
}

/** Reads a sed `s`/`y` part delimited by `delim` from `i`; the index after the closing delimiter. */
function sedPart(script: string, i: number, delim: string): number {
  while (i < script.length && script[i] !== delim) {
    if (script[i] === "\\") i += 1;
    i += 1;
  }
  return i + 1;
}

function lineEnd(script: string, i: number): number {
  const end = script.indexOf("\n", i);
  return end < 0 ? script.length : end;
}

/**
 * The commands a sed script runs: the `e command` form; the bare `e` and the `s///e` flag run the
 * pattern space (opaque); a script the reader cannot parse is opaque too.
 */
export function sedCommands(script: string): Extracted {
  const commands: string[] = [];
  let i = 0;
  const opaque = { commands, opaque: true };
  const n = script.length;
  while (i < n) {
    const c = script[i] as string;
    if (" \t\r\n;{}!".includes(c)) {
      i += 1;
      continue;
    }
    if (c === "#") {
      i = lineEnd(script, i);
      continue;
    }
    // An address: a line number, `$`, `first~step`, `/re/`, `\cREc`, with `,`, `+N`, `~N`, `I`, `M`.
    if (/[0-9$,+~/\\]/.test(c)) {
      if (c === "/") i = sedPart(script, i + 1, "/");
      else if (c === "\\") i = sedPart(script, i + 2, script[i + 1] ?? "");
      else i += 1;
      while (i < n && "IM".includes(script[i] as string)) i += 1;
      continue;
    }
    i += 1;
    switch (c) {
      case "a":
      case "i":
      case "c": {
        // Text to the end of the line, with `\`-newline continuations.
        while (i < n) {
          const end = lineEnd(script, i);
          const continued = script[end - 1] === "\\";
          i = end + 1;
          if (!continued) break;
        }
        break;
      }
      case ":":
      case "b":
      case "t":
      case "T":
      case "v":
        while (i < n && script[i] !== ";" && script[i] !== "\n") i += 1;
        break;
      case "r":
      case "R":
      case "w":
      case "W":
        i = lineEnd(script, i);
        break;
      case "e": {
        const end = lineEnd(script, i);
        const command = script.slice(i, end).trim();
        if (command === "") return opaque;
        commands.push(command);
        i = end;
        break;
      }
      case "s":
      case "y": {
        const delim = script[i];
        if (delim === undefined || delim === "\n" || delim === "\\") return opaque;
        i = sedPart(script, sedPart(script, i + 1, delim), delim);
        if (i > n) return opaque;
        if (c === "s") {
          while (i < n && /[gpiImMe0-9w]/.test(script[i] as string)) {
            if (script[i] === "e") return opaque;
            if (script[i] === "w") {
              i = lineEnd(script, i);
              break;
            }
            i += 1;
          }
        }
        break;
      }
      case "l":
      case "L":
      case "q":
      case "Q":
        while (i < n && /[0-9 ]/.test(script[i] as string)) i += 1;
        break;
      default:
        if (!"dDgGhHnNpPxz=F".includes(c)) return opaque;
    }
  }
  return { commands, opaque: false };
}

/** Ex commands (by name, as abbreviated) that run a shell, an interpreter, a script or built code. */
const EX_CODE =
  /^(?:py[a-z0-9]*|lua[a-z]*|perl[a-z]*|rub[a-z]*|tcl[a-z]*|mz[a-z]*|exe[a-z]*|cal[a-z]*|so[a-z]*|ru(?:n|nt|nti|ntim|ntime)?|l?mak[a-z]*|l?gr(?:e|ep)?[a-z]*|vim(?:g|gr|gre|grep)[a-z]*|sh(?:e|el|ell)?|redi[a-z]*|let|cs[a-z]*|sig[a-z]*|ha(?:r|rd|rdc|rdco|rdcop|rdcopy)?|norm[a-z]*|au[a-z]*|com[a-z]*|fu[a-z]*|term[a-z]*|filt[a-z]*|[a-z]*do|g|gl[a-z]*|v|vg[a-z]*|diffp[a-z]*|dl|sm[a-z]*|e|ed|edi|edit)$/;

/** One `vim -c`/`+` argument: `[range]!cmd`, `r !cmd`, `w !cmd`; other code-running commands are opaque. */
export function exCommands(command: string): Extracted {
  const commands: string[] = [];
  let opaque = false;
  let rest = command;
  while (rest !== "") {
    let text = rest.replace(/^[\s:]*/, "").replace(/^sil(?:ent|en|e)?!?\s*/, "");
    text = text.replace(/^[0-9%.$,;'+\-<>]*/, "");
    if (text.startsWith("!")) {
      commands.push(text.slice(1)); // `!` takes the rest of the line, bars included
      break;
    }
    const io = /^(?:r|re|rea|read|w|wr|wri|writ|write|up|upd|upda|updat|update)\s*!(.*)$/s.exec(text);
    if (io) {
      commands.push(io[1] as string);
      break;
    }
    const bar = text.indexOf("|");
    const part = bar < 0 ? text : text.slice(0, bar);
    const name = /^[a-zA-Z]+/.exec(part)?.[0] ?? "";
    if (EX_CODE.test(name) || /system|\\=|!/.test(part)) opaque = true;
    rest = bar < 0 ? "" : text.slice(bar + 1);
  }
  return { commands, opaque };
}

/** A `less +…` start-up command: `!cmd` runs a shell, `|m cmd` pipes to one. */
export function lessCommands(command: string): Extracted {
  const bang = command.indexOf("!");
  const pipe = command.indexOf("|");
  if (bang >= 0 && (pipe < 0 || bang < pipe)) return { commands: [command.slice(bang + 1)], opaque: false };
  if (pipe >= 0) return { commands: [command.slice(pipe + 2)], opaque: false };
  return { commands: [], opaque: false };
}
