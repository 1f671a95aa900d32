/** Builds the web dashboard into `outDir` (default dist/dashboard); see build-dashboard.mjs. */
export function buildDashboard(outDir?: string): Promise<{ outDir: string; script: string; style: string }>;
