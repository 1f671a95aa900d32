import { describe, expect, it } from "vitest";
import { cachedJsonText, jsonArrayText, jsonTextOf } from "../../src/log/json-text.js";
import { bodyJson, GrowingJsonList, joinJson } from "../../src/model/body-json.js";

describe("request bodies spliced from joined message JSON", () => {
  const messages = [
    { role: "user", content: 'a "quoted" line\n' },
    { role: "tool", content: "ünï" },
  ];

  it("is byte for byte JSON.stringify of head, messages, tail", () => {
    const head = { model: "m", stream: true };
    const tail = { tools: [{ name: "t" }], temperature: 0 };
    const joined = joinJson(messages.map((m) => JSON.stringify(m)));
    expect(bodyJson({ head, messages: joined, tail })).toBe(JSON.stringify({ ...head, messages, ...tail }));
    expect(bodyJson({ head: {}, messages: "", tail: {} })).toBe(JSON.stringify({ messages: [] }));
    expect(bodyJson({ head: { model: "m" }, messages: "1", tail: {} })).toBe('{"model":"m","messages":[1]}');
    expect(joinJson([undefined, "1", "", "2"], "0")).toBe("0,1,2");
    expect(joinJson([""], "0")).toBe("0");
  });

  it("puts keys given as JSON text after the tail's, byte for byte as JSON.stringify", () => {
    const tools = [{ name: "t", parameters: { type: "object" } }, { name: "u" }];
    const text = jsonArrayText(tools);
    expect(text).toBe(JSON.stringify(tools));
    expect(jsonArrayText([])).toBe("[]");
    const tail = { stream: true, max_tokens: 5 };
    const joined = joinJson(messages.map((m) => JSON.stringify(m)));
    expect(bodyJson({ head: { model: "m" }, messages: joined, tail, tailText: [["tools", text]] })).toBe(
      JSON.stringify({ model: "m", messages, ...tail, tools }),
    );
    expect(bodyJson({ head: {}, messages: "", tail: {}, tailText: [["tools", text]] })).toBe(
      JSON.stringify({ messages: [], tools }),
    );
  });

  it("writes an unchanging object's JSON once, whoever asks", () => {
    let made = 0;
    const wire = cachedJsonText((tool: { name: string }) => {
      made++;
      return { type: "function", function: tool };
    });
    const tool = Object.freeze({ name: "t" });
    expect(jsonArrayText([tool, tool], wire)).toBe(
      JSON.stringify([0, 0].map(() => ({ type: "function", function: tool }))),
    );
    expect(wire(tool)).toBe(JSON.stringify({ type: "function", function: tool }));
    expect(made).toBe(1);
    expect(jsonTextOf(tool)).toBe('{"name":"t"}');
  });

  it("serializes each message once and joins only a growing list's news", () => {
    let made = 0;
    const list = new GrowingJsonList<{ text: string }, string>((message, variant) => {
      made++;
      return message.text === "skip" ? undefined : { variant, text: message.text };
    });
    const history = [{ text: "a" }, { text: "skip" }, { text: "b" }];
    const whole = (items: { text: string }[], variant: string) =>
      JSON.stringify(items.filter((m) => m.text !== "skip").map((m) => ({ variant, text: m.text }))).slice(
        1,
        -1,
      );
    expect(list.join(history, "v1")).toBe(whole(history, "v1"));
    expect(made).toBe(3);
    history.push({ text: "c" });
    expect(list.join(history, "v1")).toBe(whole(history, "v1"));
    expect(made).toBe(4);
    // A replaced range: the surviving objects keep their JSON, the new one is made.
    const replaced = [history[0]!, { text: "summary" }, history[3]!];
    expect(list.join(replaced, "v1")).toBe(whole(replaced, "v1"));
    expect(made).toBe(5);
    // Another variant (preset) makes everything again.
    expect(list.join(replaced, "v2")).toBe(whole(replaced, "v2"));
    expect(made).toBe(8);
    expect(list.join([], "v2")).toBe("");
  });

  it("keeps a bounded number of conversations", () => {
    const list = new GrowingJsonList<{ n: number }, number>((m) => m, 2);
    const a = [{ n: 1 }];
    const b = [{ n: 2 }];
    const c = [{ n: 3 }];
    for (const items of [a, b, c, a]) expect(list.join(items, 0)).toBe(JSON.stringify(items).slice(1, -1));
    expect((list as unknown as { conversations: Map<object, unknown> }).conversations.size).toBe(2);
  });
});
