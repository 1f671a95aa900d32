/** Types of ./check-seed-ids.mjs, for the TypeScript test that runs it (test/docs/seed-ids.test.ts). */
export declare const repoRoot: string;
export declare const SERIES: Readonly<Record<"L" | "R" | "SP" | "M" | "C" | "T" | "G" | "P" | "S", number>>;
export declare const NOT_IDS: ReadonlyArray<{ re: RegExp; why: string }>;
export declare function isSeedId(id: string): boolean;
export declare function idsIn(text: string): { ids: string[]; issues: number[] };
export declare function splitSource(
  fileName: string,
  text: string,
): { comments: string[]; literals: string[] };
export type Citations = {
  ids: Map<string, Set<string>>;
  visible: Map<string, Set<string>>;
  issues: Map<number, Set<string>>;
};
export declare function collectCitations(srcDir?: string): Citations;
export declare function documentedIds(docPath?: string): Set<string>;
export declare function documentedIssues(docPath?: string): Set<number>;
export declare function compareIds(a: string, b: string): number;
export type CheckResult = {
  cited: string[];
  unknown: string[];
  undocumented: string[];
  documentedButNotReal: string[];
  visible: string[];
  issues: number[];
  undocumentedIssues: number[];
  where: Citations;
};
export declare function check(): CheckResult;
export declare function whereCell(key: string | number, result: CheckResult): string;
export declare function refreshedDoc(text: string, result?: CheckResult): string;
