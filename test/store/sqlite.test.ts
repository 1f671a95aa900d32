import { describe } from "vitest";
import { storeContract } from "./contract.js";
import { sqliteHarness } from "./harness.js";

describe("SqliteStore", () => {
  storeContract(sqliteHarness());
});
