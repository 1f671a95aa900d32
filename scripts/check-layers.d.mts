/** The import-direction check of docs/architecture.md's layers; see check-layers.mjs. */
export type ImportEdge = { from: string; to: string; typeOnly: boolean };
export const LAYERS: Record<string, string[]>;
export function layerOf(path: string, layers?: Record<string, string[]>): string | undefined;
export function allowed(edge: ImportEdge, layers?: Record<string, string[]>): boolean;
export function violations(edges: readonly ImportEdge[], layers?: Record<string, string[]>): string[];
export function importsOf(text: string): { specifier: string; typeOnly: boolean }[];
export function collectEdges(root?: string): ImportEdge[];
