/**
 * Command-line options read the way the program itself reads them (a program accepts `rm --rec`, `git reset
 * --ha`, `python3 -X dev -c …` hid what runs), for the dangerous-command detector.
 *
 * Invariants:
 * - Short options follow getopt: a cluster `-abc` is read letter by letter; a letter that takes a value
 *   takes the rest of the cluster, or the next argument when the cluster ends there.
 * - Long options follow GNU getopt_long: `--name` or `--name=value`, and a prefix names the one option
 *   it starts (`--rec` is `--recursive`). A prefix that starts several options is reported with all of
 *   them (`ambiguous`): the detector treats it as any of them, which can only flag more.
 * - `--` ends the options; so does the first operand unless `permute` (GNU's default reordering).
 * - An option the grammar does not know stops the read and is reported (`unknown`): callers that must
 *   find an inner command fail closed on it.
 * - Linear in the number of arguments times the table size; no regex.
 */

/** Whether a long option takes a value: never, always (`--x v` or `--x=v`), or only as `--x=v`. */
export type Arity = "none" | "required" | "optional";

export type OptionSpec = {
  /** Short letters that take a value. */
  shortValue?: string;
  /** Short letters that take no value. */
  shortFlags?: string;
  /** Short letters whose value is optional and only attached (`-c5`, prlimit's `-c[limits]`). */
  shortOptional?: string;
  /** Long option names (without `--`) and their arity. */
  long?: Readonly<Record<string, Arity>>;
  /** Options and operands may mix (GNU permutation); the default is to stop at the first operand. */
  permute?: boolean;
  /** `-NUMBER` is an option (`nice -10`, `xargs`-style old forms). */
  numeric?: boolean;
};

export type ParsedOption = {
  /** `-x` for a short option, `--name` (the full name) for a long one. */
  name: string;
  value: string | undefined;
  /** Other names an ambiguous long prefix could mean (empty when it is unique). */
  alternatives: string[];
};

export type ParsedOptions = {
  options: ParsedOption[];
  /** Indices of the operands read before the options ended (with `permute`). */
  operands: number[];
  /** Index of the first argument after the options. */
  rest: number;
  /** The first option the grammar does not know, if the read stopped on one. */
  unknown: string | undefined;
};

/** The long options `prefix` names: the exact one, else every option it starts. */
export function matchLong(prefix: string, long: Readonly<Record<string, Arity>>): string[] {
  if (Object.hasOwn(long, prefix)) return [prefix];
  const out: string[] = [];
  for (const name of Object.keys(long)) if (name.startsWith(prefix)) out.push(name);
  return out;
}

/** Reads the options of `args` (the program's arguments, without its name) by `spec`. */
export function parseOptions(args: readonly string[], spec: OptionSpec): ParsedOptions {
  const options: ParsedOption[] = [];
  const operands: number[] = [];
  const long = spec.long ?? {};
  const shortValue = spec.shortValue ?? "";
  const shortFlags = spec.shortFlags ?? "";
  const shortOptional = spec.shortOptional ?? "";
  let i = 0;
  while (i < args.length) {
    const t = args[i] as string;
    if (t === "--") return { options, operands, rest: i + 1, unknown: undefined };
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const prefix = eq < 0 ? t.slice(2) : t.slice(2, eq);
      const names = matchLong(prefix, long);
      if (names.length === 0) return { options, operands, rest: i, unknown: t };
      const arity = long[names[0] as string] as Arity;
      let value: string | undefined = eq < 0 ? undefined : t.slice(eq + 1);
      if (value === undefined && arity === "required") {
        value = args[i + 1];
        i += 1;
      }
      options.push({ name: `--${names[0]}`, value, alternatives: names.slice(1).map((n) => `--${n}`) });
      i += 1;
      continue;
    }
    if (t.startsWith("-") && t.length > 1) {
      if (spec.numeric && /^-\d+$/.test(t)) {
        options.push({ name: "-#", value: t.slice(1), alternatives: [] });
        i += 1;
        continue;
      }
      let consumedNext = false;
      for (let j = 1; j < t.length; j += 1) {
        const c = t[j] as string;
        if (shortValue.includes(c)) {
          let value: string | undefined = t.slice(j + 1);
          if (value === "") {
            value = args[i + 1];
            consumedNext = true;
          }
          options.push({ name: `-${c}`, value, alternatives: [] });
          break;
        }
        if (shortOptional.includes(c)) {
          const value = t.slice(j + 1);
          options.push({ name: `-${c}`, value: value === "" ? undefined : value, alternatives: [] });
          break;
        }
        if (!shortFlags.includes(c)) return { options, operands, rest: i, unknown: t };
        options.push({ name: `-${c}`, value: undefined, alternatives: [] });
      }
      i += consumedNext ? 2 : 1;
      continue;
    }
    if (!spec.permute) break;
    operands.push(i);
    i += 1;
  }
  return { options, operands, rest: i, unknown: undefined };
}

/** Whether `parsed` holds one of `names` (an ambiguous prefix counts as each option it could be). */
export function hasParsed(parsed: ParsedOptions, names: readonly string[]): boolean {
  return parsed.options.some((o) => names.includes(o.name) || o.alternatives.some((a) => names.includes(a)));
}

/** The values given to one of `names`. */
export function valuesOf(parsed: ParsedOptions, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const o of parsed.options)
    if (o.value !== undefined && (names.includes(o.name) || o.alternatives.some((a) => names.includes(a))))
      out.push(o.value);
  return out;
}
