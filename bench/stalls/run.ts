/**
 * bench/stalls (issue 7 item 8): the stall suite run twice in one go — with the §9 continuation checks on,
 * and with only DSH's mechanisms (goal rounds, empty-reply retry) — printing each scenario's outcome, the
 * completion rate of each mode and the requests spent.
 *
 *   node --import tsx bench/stalls/run.ts
 */
import { runScenario, type StallOutcome } from "../../test/stalls/run-scenario.js";
import { SCENARIOS } from "../../test/stalls/scenarios.js";

const rows: { name: string; on: StallOutcome; off: StallOutcome }[] = [];
for (const scenario of SCENARIOS) {
  const on = await runScenario(scenario, true);
  const off = await runScenario(scenario, false);
  rows.push({ name: scenario.name, on, off });
}

const cell = (o: StallOutcome) =>
  `${o.reached ? "yes" : "NO "} ${String(o.requests).padStart(2)} req ${o.nudges} nudge ${o.rounds} round`;
const width = Math.max(...rows.map((r) => r.name.length));
console.log(`${"scenario".padEnd(width)}  ${"checks on".padEnd(28)}  checks off (DSH alone)`);
for (const row of rows)
  console.log(`${row.name.padEnd(width)}  ${cell(row.on).padEnd(28)}  ${cell(row.off)}`);

const summary = (pick: (r: (typeof rows)[number]) => StallOutcome) => {
  const outcomes = rows.map(pick);
  const reached = outcomes.filter((o) => o.reached).length;
  const requests = outcomes.reduce((sum, o) => sum + o.requests, 0);
  return { reached, requests, rate: (100 * reached) / outcomes.length };
};
const on = summary((r) => r.on);
const off = summary((r) => r.off);
console.log("");
console.log(
  `completion: checks on ${on.reached}/${rows.length} (${on.rate.toFixed(0)}%), checks off ${off.reached}/${rows.length} (${off.rate.toFixed(0)}%)`,
);
console.log(
  `requests:   checks on ${on.requests}, checks off ${off.requests} (extra with checks: ${on.requests - off.requests})`,
);
const finished = rows.filter((r) => SCENARIOS.find((s) => s.name === r.name)?.finishesAlone);
const extra = finished.reduce((sum, r) => sum + (r.on.requests - r.off.requests), 0);
console.log(`genuinely finished runs: ${finished.length}, extra requests with checks on: ${extra}`);
