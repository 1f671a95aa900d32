/** Opening an agent failed before anything was sent to a model (no key, unknown provider, no such session). */
export class SetupError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "SetupError";
  }
}
