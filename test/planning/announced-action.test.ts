import { describe, expect, it } from "vitest";
import { announcesAction } from "../../src/planning/announced-action.js";

const ANNOUNCEMENTS = [
  "Now I'll run the tests.",
  "Next, I will update the config",
  "Let me check the logs.",
  "I'm going to fix the failing import now.",
  "Let's run the build to confirm.",
  "I'll now verify the output.",
  "First, I need to inspect the schema:",
  "The config looks wrong. Let me look at the loader.",
  "Found it: the path is relative.\n\nNow let me update the README.",
  "I will now proceed to apply the migration.",
  "Next step: run the migration.",
  "Good, that worked. Now running the integration tests.",
  "Let me take a look at the failing test.",
  "I'll go ahead and commit these changes.",
  "The parser is fixed. Next I'll add a regression test for it.",
  "I'll run `npm test` to make sure nothing else broke.",
];

const ENDINGS = [
  "Done. The tests pass.",
  "I'll be here if you need anything",
  "I'll be here if you need anything else.",
  "Would you like me to run the full suite as well?",
  "Should I proceed with the migration?",
  "Let me know if you want any changes.",
  "All changes are committed. I've updated the config and the tests pass.",
  "If you want, I can also update the docs.",
  "I'll leave the remaining cleanup to you.",
  "I ran the tests and they all pass. Let me know if you need anything else.",
  "Summary: I updated src/a.ts and ran the tests; everything passes.",
  "I'll run the tests. Done: all 42 pass.",
  "The fix is in place, and the next time you run the build it will pick up the new flag.",
  "I can run the benchmarks if you'd like.",
  "Next steps for you: review the PR and merge it.",
  "",
  "```ts\n// I'll run the tests\n```\nThat is the whole change; it compiles and the tests pass.",
  "Everything is finished. Let me know what you'd like to do next.",
];

describe("§9 (d) announced-action detector", () => {
  for (const text of ANNOUNCEMENTS) {
    it(`flags: ${JSON.stringify(text)}`, () => {
      expect(announcesAction(text)).toBe(true);
    });
  }
  for (const text of ENDINGS) {
    it(`stays quiet on: ${JSON.stringify(text)}`, () => {
      expect(announcesAction(text)).toBe(false);
    });
  }
});
