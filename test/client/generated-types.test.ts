/**
 * Issue 37 item 4: the client's types are generated from the routes; the committed file must be what the
 * routes say now (a route changed without `npm run build` would leave the client lying).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLIENT_TYPES, clientTypes } from "../../scripts/generate-client.js";

describe("src/client/api.ts", () => {
  it("equals a fresh generation from the server's OpenAPI document", async () => {
    expect(readFileSync(CLIENT_TYPES, "utf8")).toBe(await clientTypes());
  });
});
