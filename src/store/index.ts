/** The store's public surface: the interface, its errors, the two implementations and the factory. */

export { type Migration, POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from "./migrations.js";
export { createStore, type OpenStoreOptions, openStore, SQLITE_FILE } from "./open-store.js";
export {
  GoalExistsError,
  type GoalPatch,
  type GoalRow,
  type NewGoal,
  type NewSchedule,
  type SchedulePatch,
  type ScheduleRow,
} from "./planning-rows.js";
export { PostgresStore, type PostgresStoreOptions } from "./postgres-store.js";
export { redactUrl } from "./redact-url.js";
export { InvalidInputError } from "./rows.js";
export { AmbiguousSessionIdError, MAX_CANDIDATES, MIN_PREFIX_LENGTH } from "./session-ids.js";
export { SqliteStore, type SqliteStoreOptions } from "./sqlite-store.js";
export * from "./store.js";
