import { defineConfig } from "vitest/config";
import { guard } from "./test/support/wait.js";
import { TEST_WORKERS } from "./test/support/workers.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Failure guards only (tests wait on events, never on time): generous for a loaded machine, and
    // multiplied by BDSH_TEST_TIME_SCALE (`npm run test:stress` raises it).
    testTimeout: guard(120_000),
    hookTimeout: guard(120_000),
    pool: "forks",
    maxWorkers: TEST_WORKERS,
  },
});
