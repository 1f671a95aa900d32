import { describe, expect, it } from "vitest";
import { bodyJson, FragmentCache } from "../../src/model/body-json.js";

describe("request bodies spliced from message fragments", () => {
  const messages = [
    { role: "user", content: 'a "quoted" line\n' },
    { role: "tool", content: "ünï" },
  ];

  it("is byte for byte JSON.stringify of head, messages, tail", () => {
    const head = { model: "m", stream: true };
    const tail = { tools: [{ name: "t" }], temperature: 0 };
    expect(bodyJson({ head, messages: messages.map((m) => JSON.stringify(m)), tail })).toBe(
      JSON.stringify({ ...head, messages, ...tail }),
    );
    expect(bodyJson({ head: {}, messages: [], tail: {} })).toBe(JSON.stringify({ messages: [] }));
    expect(bodyJson({ head: { model: "m" }, messages: ["1"], tail: {} })).toBe(
      '{"model":"m","messages":[1]}',
    );
  });

  it("caches a fragment per message object and variant", () => {
    const cache = new FragmentCache<object, string>();
    const message = { text: "x" };
    let made = 0;
    const make = () => {
      made++;
      return { content: "x" };
    };
    expect(cache.get(message, "deepseek", make)).toBe('{"content":"x"}');
    expect(cache.get(message, "deepseek", make)).toBe('{"content":"x"}');
    expect(made).toBe(1);
    cache.get(message, "openai", make);
    expect(made).toBe(2);
    expect(cache.get({ text: "y" }, "openai", () => undefined)).toBeUndefined();
  });
});
