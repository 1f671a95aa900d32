/**
 * Shared setup for the model tests: a fake provider per test, a route pointed at it, and a request
 * builder. Keys come from an explicit env object, never from the real environment.
 */
import type { SurfaceMessage } from "../../src/log/messages.js";
import {
  createAdapter,
  LlmError,
  type ModelAdapter,
  type ModelPart,
  type ModelRequest,
  type ProviderName,
  type Route,
  type RouteOptions,
  resolveRoute,
} from "../../src/model/index.js";
import { type FakeProvider, type FakeScript, startFakeProvider } from "../../testing/fake-provider/index.js";

export const TEST_KEY = "sk-test-secret-0123456789";
export const TEST_ENV = { BDSH_API_KEY: TEST_KEY } as const;

const open: FakeProvider[] = [];

export async function fakeWith(script: FakeScript): Promise<FakeProvider> {
  const fake = await startFakeProvider({ script });
  open.push(fake);
  return fake;
}

export async function closeFakes(): Promise<void> {
  await Promise.all(open.splice(0).map((fake) => fake.close()));
}

/** The base URL a preset would use, moved onto the fake (keeping the preset's path layout). */
export function routeTo(
  fake: FakeProvider,
  provider: ProviderName,
  options: Partial<RouteOptions> = {},
): Route {
  const suffix: Record<ProviderName, string> = {
    deepseek: "",
    "deepseek-anthropic": "/anthropic",
    together: "/v1",
    openai: "/v1",
    anthropic: "",
    openrouter: "/api/v1",
    "openai-compatible": "/v1",
  };
  return resolveRoute({ provider, baseUrl: fake.url + suffix[provider], ...options }, {});
}

export function adapterFor(
  fake: FakeProvider,
  provider: ProviderName,
  options: Partial<RouteOptions> = {},
): ModelAdapter {
  return createAdapter(routeTo(fake, provider, options), { env: TEST_ENV });
}

export function request(messages: SurfaceMessage[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "test-model",
    system: "You are a careful agent.",
    messages,
    tools: [
      {
        name: "read",
        description: "Read a file.",
        parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      },
    ],
    effort: "high",
    ...overrides,
  };
}

export async function drain(stream: AsyncIterable<ModelPart>): Promise<ModelPart[]> {
  const parts: ModelPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

export async function failure(stream: AsyncIterable<ModelPart>): Promise<LlmError> {
  try {
    await drain(stream);
  } catch (error) {
    if (error instanceof LlmError) return error;
    throw error;
  }
  throw new Error("expected the stream to fail");
}

export function body(fake: FakeProvider, index: number): Record<string, unknown> {
  const received = fake.requests[index];
  if (!received?.body) throw new Error(`no JSON request ${index}`);
  return received.body;
}
