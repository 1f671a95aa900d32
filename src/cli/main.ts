#!/usr/bin/env node
/**
 * The `bdsh` binary: runs the program and exits with its code (INTERFACE.md "Exit codes"). The program is
 * imported only after the compile cache is on, so the cache covers it.
 */
import { enableCompileCache } from "./compile-cache.js";

enableCompileCache();
const [{ endQuietlyOnBrokenPipe }, { main }] = await Promise.all([
  import("./output.js"),
  import("./program.js"),
]);
endQuietlyOnBrokenPipe();
process.exitCode = await main(process.argv.slice(2));
