/** Where the CLI writes: stdout for results (JSON Lines with `--json`), stderr for progress and errors. */
export type Output = { out(line: string): void; err(line: string): void };

export const processOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};
