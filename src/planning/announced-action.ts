/**
 * §9 check (d): does a final reply announce an action it did not take? ("Now I'll run the tests." and the
 * turn ends.) A pure function of the text, tuned to be precise: a false alarm costs a request and annoys a
 * model that had finished, so it stays quiet on questions, offers, conditionals and closing summaries.
 *
 * The rule, on the reply's last two sentences (code blocks removed):
 * - an intent opener — "I'll", "I will", "I'm going to", "Let me", "Let's", "I need to", "Now/Next …", a
 *   "Next step:" label, or "Now running …" — followed by an action verb (run, check, update, fix, …);
 * - not inside a condition ("if you …", "once you …", "unless …") or an offer ("I can …", "Let me know");
 * - quiet when the last sentence is a question, an offer or sign-off, or reports completion and the intent
 *   is only in the sentence before it.
 */

const ACTION_VERBS = new Set(
  (
    "run rerun re-run check double-check verify test retest update fix create write rewrite read reread look open " +
    "add implement inspect edit modify search install apply start continue proceed try make examine review " +
    "investigate refactor change remove delete build rebuild compile commit push set configure call use execute " +
    "move rename debug analyze analyse grep find list fetch download patch replace restart deploy generate scan " +
    "explore dig take go clean format lint merge migrate copy prepare draft compute measure validate confirm " +
    "ensure address handle tackle work begin do see glance trace reproduce profile benchmark upgrade downgrade " +
    "bump revert rollback adjust tweak correct resolve wire hook port split extract inline document"
  ).split(" "),
);

const PROGRESSIVE =
  /^(?:(?:now|next|then)\s*,?\s+)(running|checking|updating|fixing|creating|writing|reading|looking|opening|adding|implementing|inspecting|editing|applying|building|testing|verifying|installing|searching|moving|starting|trying|investigating|refactoring)\b/i;

const INTENT =
  /\b(?:i['’]ll|i\s+will|i['’]m\s+going\s+to|i\s+am\s+going\s+to|i['’]m\s+about\s+to|let\s+me|let['’]s|let\s+us|i\s+need\s+to|i\s+now\s+need\s+to|i\s+should\s+now|time\s+to)\s+((?:(?:now|next|then|first|also|just|quickly|go\s+ahead\s+and|start\s+by|proceed\s+to|begin\s+by)\s+)*)([a-z][a-z-]*)/gi;

const STEP_LABEL = /^(?:next\s+step|next|now|then|step\s+\d+)\s*:\s*([a-z][a-z-]*)/i;

const CONDITION =
  /\b(?:if\s+you|if\s+you['’]d|if\s+needed|if\s+necessary|once\s+you|when\s+you|unless|whenever\s+you|should\s+you)\b/i;

const OFFER_OR_SIGNOFF =
  /\b(?:let\s+me\s+know|feel\s+free|happy\s+to\s+help|i\s+can\s+also|i\s+could\s+also|if\s+you['’]d\s+like|would\s+you\s+like|do\s+you\s+want|i['’]ll\s+be\s+(?:here|around|available)|anything\s+else|your\s+call|up\s+to\s+you)\b/i;

const COMPLETION =
  /\b(?:done|complete[sd]?|finished|all\s+set|pass(?:es|ed)?|succeed(?:s|ed)?|success(?:ful(?:ly)?)?|fixed|resolved|in\s+place|committed|merged|ready)\b/i;

/** True when the reply ends by announcing an action that needs a tool call. */
export function announcesAction(text: string): boolean {
  const sentences = lastSentences(text, 2);
  const last = sentences.at(-1);
  if (!last) return false;
  if (last.trimEnd().endsWith("?") || OFFER_OR_SIGNOFF.test(last)) return false;
  if (intends(last)) return true;
  const before = sentences.length === 2 ? sentences[0]! : undefined;
  if (before === undefined || COMPLETION.test(last)) return false;
  return intends(before);
}

function intends(sentence: string): boolean {
  if (CONDITION.test(sentence) || OFFER_OR_SIGNOFF.test(sentence) || sentence.trimEnd().endsWith("?"))
    return false;
  const trimmed = sentence.trim();
  if (PROGRESSIVE.test(trimmed)) return true;
  const label = STEP_LABEL.exec(trimmed);
  if (label && ACTION_VERBS.has(label[1]!.toLowerCase())) return true;
  for (const match of trimmed.matchAll(INTENT)) {
    if (ACTION_VERBS.has(match[2]!.toLowerCase())) return true;
  }
  return false;
}

/** The last `count` sentences, with fenced code and inline code removed. */
export function lastSentences(text: string, count: number): string[] {
  const prose = text
    .replace(/```[\s\S]*?(```|$)/g, " ")
    .replace(/`[^`\n]*`/g, "x")
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/gm, "");
  const sentences = prose
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => /[a-z]/i.test(s));
  return sentences.slice(-count);
}
