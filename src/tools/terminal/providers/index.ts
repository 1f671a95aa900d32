/**
 * The built-in terminal backends (Hermes in-tree names, seed 000 `terminal-environment-plugin.md`):
 * `local`, `ssh` and `docker` work; the other reserved names are registered as providers that report
 * "not available in this build", so `doctor` and `bdsh backends list` name them and selecting one fails
 * with that message instead of "unknown backend".
 */
import { TerminalBackendRegistry, type TerminalEnvironmentProvider } from "../environment.js";
import { localBackend } from "../local.js";
import { type DockerSettings, dockerProvider, dockerSettings } from "./docker.js";
import { type SshSettings, sshProvider, sshSettings } from "./ssh.js";

export const NOT_IN_BUILD = ["singularity", "modal", "managed_modal", "daytona", "vercel_sandbox"] as const;

const DISPLAY: Record<(typeof NOT_IN_BUILD)[number], string> = {
  singularity: "Singularity",
  modal: "Modal",
  managed_modal: "Managed Modal",
  daytona: "Daytona",
  vercel_sandbox: "Vercel Sandbox",
};

export function unavailableProvider(name: (typeof NOT_IN_BUILD)[number]): TerminalEnvironmentProvider {
  const detail = `${DISPLAY[name]} (${name}) is not available in this build`;
  return {
    name,
    displayName: DISPLAY[name],
    description: `${DISPLAY[name]} sandbox: not available in this build.`,
    isRemote: true,
    isContainer: true,
    isAvailable: () => false,
    probe: () => ({ ok: false, detail }),
    doctorChecks: () => [{ status: "fail", name: `backend ${name}`, detail }],
    setupInstructions: () => `${detail}; choose local, ssh or docker, or a plugin backend`,
    createEnvironment: () => {
      throw new Error(`terminal backend "${name}": ${detail}`);
    },
  };
}

export type BuiltinSettings = {
  ssh?: Partial<SshSettings> | Record<string, unknown>;
  docker?: Partial<DockerSettings> | Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
};

/** A registry holding every built-in backend, ready for plugins to add theirs. */
export function builtinRegistry(settings: BuiltinSettings = {}): TerminalBackendRegistry {
  const registry = new TerminalBackendRegistry();
  const env = settings.env ?? process.env;
  registry.register(localBackend, { builtin: true });
  registry.register(sshProvider(sshSettings(settings.ssh as Record<string, unknown>), env), {
    builtin: true,
  });
  registry.register(dockerProvider(dockerSettings(settings.docker as Record<string, unknown>), env), {
    builtin: true,
  });
  for (const name of NOT_IN_BUILD) registry.register(unavailableProvider(name), { builtin: true });
  return registry;
}
