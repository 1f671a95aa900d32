#!/usr/bin/env node
/** The `bdsh` binary: runs the program and exits with its code (INTERFACE.md "Exit codes"). */
import { endQuietlyOnBrokenPipe } from "./output.js";
import { main } from "./program.js";

endQuietlyOnBrokenPipe();
process.exitCode = await main(process.argv.slice(2));
