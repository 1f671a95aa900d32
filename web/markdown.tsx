/**
 * Model and user text as Markdown: `marked`'s lexer (GFM) turns it into tokens, and this file turns the
 * tokens into Preact elements. Nothing is ever parsed as HTML or set as `innerHTML`:
 *
 * - Raw HTML in the text (`<script>`, `<img onerror>`) is a token of its own here, drawn as its text.
 * - A link is a link only when its target is `http:`, `https:` or `mailto:`; it opens in a new tab with
 *   `rel="noopener noreferrer"`. Any other target (`javascript:`, `data:`, a relative path) is drawn as the
 *   link's text. Images are never loaded (a hostile image URL is a beacon): they show as a link to the
 *   image, under the same rule.
 * - Code blocks are highlighted by lowlight (highlight.js grammars), which returns a tree of spans that is
 *   drawn as elements too.
 */
import type { Element as HastElement, Root as HastRoot, RootContent } from "hast";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { createLowlight } from "lowlight";
import { Lexer, type Token, type Tokens } from "marked";
import type { ComponentChildren } from "preact";

const lowlight = createLowlight({
  bash,
  diff,
  javascript,
  json,
  python,
  typescript,
  xml,
  yaml,
});
lowlight.registerAlias({
  bash: ["sh", "shell", "zsh", "console"],
  javascript: ["js", "jsx", "mjs"],
  typescript: ["ts", "tsx"],
  python: ["py"],
  xml: ["html", "svg"],
  yaml: ["yml"],
});

/** The targets a link may have; anything else is shown as text. */
export function safeHref(href: string): string | undefined {
  try {
    const url = new URL(href);
    return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:"
      ? url.toString()
      : undefined;
  } catch {
    return undefined; // relative or malformed: there is no page of ours it could sensibly point at
  }
}

/** Text as Markdown; very long texts are drawn as plain text (a lexer pass over megabytes blocks a frame). */
export function Markdown({ text }: { text: string }) {
  if (text.length > 200_000) return <pre class="md-plain">{text}</pre>;
  const tokens = Lexer.lex(text, { gfm: true, breaks: true });
  return <div class="md">{blocks(tokens)}</div>;
}

function blocks(tokens: readonly Token[]): ComponentChildren {
  return tokens.map((token, i) => block(token, i));
}

function block(token: Token, key: number): ComponentChildren {
  switch (token.type) {
    case "space":
    case "def":
      return null;
    case "heading": {
      const t = token as Tokens.Heading;
      // Headings in a message are one level under the page's own (h1) and the card's: h3…h6.
      const Tag = `h${Math.min(6, t.depth + 2)}` as "h3";
      return <Tag key={key}>{inline(t.tokens)}</Tag>;
    }
    case "paragraph":
      return <p key={key}>{inline((token as Tokens.Paragraph).tokens)}</p>;
    case "text": {
      const t = token as Tokens.Text;
      return <p key={key}>{t.tokens ? inline(t.tokens) : t.text}</p>;
    }
    case "code": {
      const t = token as Tokens.Code;
      return <CodeBlock key={key} lang={t.lang ?? ""} code={t.text} />;
    }
    case "blockquote":
      return <blockquote key={key}>{blocks((token as Tokens.Blockquote).tokens)}</blockquote>;
    case "hr":
      return <hr key={key} />;
    case "list": {
      const t = token as Tokens.List;
      const items = t.items.map((item, j) => (
        <li key={j}>
          {item.task ? (
            <input type="checkbox" checked={item.checked ?? false} disabled aria-label="task" />
          ) : null}
          {listItem(item)}
        </li>
      ));
      return t.ordered ? (
        <ol key={key} start={typeof t.start === "number" ? t.start : 1}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case "table": {
      const t = token as Tokens.Table;
      const align = (a: Tokens.TableCell["align"]) => (a ? { textAlign: a } : undefined);
      return (
        <div key={key} class="md-table">
          <table>
            <thead>
              <tr>
                {t.header.map((cell, j) => (
                  <th key={j} scope="col" style={align(cell.align)}>
                    {inline(cell.tokens)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {t.rows.map((row, r) => (
                <tr key={r}>
                  {row.map((cell, j) => (
                    <td key={j} style={align(cell.align)}>
                      {inline(cell.tokens)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
    case "html":
      // Raw HTML is shown, never interpreted.
      return (
        <p key={key} class="md-raw">
          {(token as Tokens.HTML).text}
        </p>
      );
    default:
      return "raw" in token ? <p key={key}>{String(token.raw)}</p> : null;
  }
}

/** A list item's content: a tight item's text is inline, a loose one's blocks. */
function listItem(item: Tokens.ListItem): ComponentChildren {
  if (item.tokens.length === 1 && item.tokens[0]?.type === "text") {
    const text = item.tokens[0] as Tokens.Text;
    return text.tokens ? inline(text.tokens) : text.text;
  }
  return blocks(item.tokens);
}

function inline(tokens: readonly Token[] | undefined): ComponentChildren {
  return (tokens ?? []).map((token, key) => inlineToken(token, key));
}

function inlineToken(token: Token, key: number): ComponentChildren {
  switch (token.type) {
    case "text": {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens) : t.text;
    }
    case "escape":
      return (token as Tokens.Escape).text;
    case "strong":
      return <strong key={key}>{inline((token as Tokens.Strong).tokens)}</strong>;
    case "em":
      return <em key={key}>{inline((token as Tokens.Em).tokens)}</em>;
    case "del":
      return <del key={key}>{inline((token as Tokens.Del).tokens)}</del>;
    case "codespan":
      return <code key={key}>{(token as Tokens.Codespan).text}</code>;
    case "br":
      return <br key={key} />;
    case "link": {
      const t = token as Tokens.Link;
      const href = safeHref(t.href);
      const children = inline(t.tokens);
      return href ? (
        <a key={key} href={href} target="_blank" rel="noopener noreferrer">
          {children}
        </a>
      ) : (
        <span key={key} class="md-unsafe-link">
          {children}
        </span>
      );
    }
    case "image": {
      const t = token as Tokens.Image;
      const href = safeHref(t.href);
      const label = `image: ${t.text || t.href}`;
      return href ? (
        <a key={key} href={href} target="_blank" rel="noopener noreferrer">
          {label}
        </a>
      ) : (
        <span key={key}>{label}</span>
      );
    }
    case "html":
      return <span key={key}>{(token as Tokens.HTML).text}</span>;
    default:
      return "raw" in token ? String(token.raw) : null;
  }
}

function CodeBlock({ lang, code }: { lang: string; code: string }) {
  const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  let tree: HastRoot | undefined;
  if (name && lowlight.registered(name) && code.length < 100_000) {
    try {
      tree = lowlight.highlight(name, code);
    } catch {
      tree = undefined;
    }
  }
  return (
    <pre class="code" data-lang={name || undefined}>
      <code>{tree ? hast(tree.children) : code}</code>
    </pre>
  );
}

/** lowlight's tree (spans with `hljs-*` classes and text) as elements. */
function hast(nodes: readonly RootContent[]): ComponentChildren {
  return nodes.map((node, key) => {
    if (node.type === "text") return node.value;
    if (node.type !== "element") return null;
    const element = node as HastElement;
    const className = element.properties?.className;
    const classes = Array.isArray(className) ? className.map(String).join(" ") : undefined;
    return (
      <span key={key} class={classes}>
        {hast(element.children as RootContent[])}
      </span>
    );
  });
}
