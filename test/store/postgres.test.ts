import { describe, inject } from "vitest";
import { storeContract } from "./contract.js";
import { postgresHarness } from "./harness.js";

describe("PostgresStore", () => {
  storeContract(postgresHarness(inject("databaseUrl")));
});
