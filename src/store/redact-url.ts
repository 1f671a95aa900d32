/**
 * `Store.location` for PostgreSQL: the connection URL safe to print (`bdsh doctor`, logs). The password
 * never leaves, whether it sits in the authority or in a `password` parameter; an unparsable string is
 * not shown at all.
 */

/** The connection string without its password (in the authority or as a `password` parameter). */
export function redactUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = "***";
    for (const key of [...url.searchParams.keys()]) {
      if (key.toLowerCase() === "password") url.searchParams.set(key, "***");
    }
    return url.toString();
  } catch {
    return "postgres (connection string not shown)";
  }
}
