/**
 * The route table: each route is declared once with its schema, registered on Fastify from here, and
 * published from the same objects as an OpenAPI 3.1 document (`GET /v1/openapi.json`).
 *
 * Invariants:
 * - A route that needs the token checks it in `onRequest`: before Fastify reads,
 *   parses or validates a byte of the body, so a caller without the token costs the server no parsing and
 *   learns nothing from validation errors.
 * - The table knows every route's path pattern, so a request for a known path with another method is a
 *   405 with `Allow` instead of a 404 (`allowedMethods`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import type { RouteSchema } from "./schemas.js";

export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

type Declared = { method: HTTPMethods; url: string; schema: RouteSchema; auth: boolean; match: RegExp };

/** What the OpenAPI document says about the token (the scheme `bearer`). */
const BEARER_DESCRIPTION =
  "`Authorization: Bearer <token>` on every /v1 route, loopback included: BDSH_SERVER_TOKEN when set, " +
  "otherwise the token `bdsh serve` makes at start and prints once on its stderr. A browser signed in " +
  "through POST /v1/sign-in sends its `bdsh_session` cookie instead (state changes from its own Origin only).";

export class RouteTable {
  private readonly routes: Declared[] = [];

  constructor(
    private readonly app: FastifyInstance,
    private readonly options: { bodyLimit: number; authenticate: RouteHandler },
  ) {}

  add(method: HTTPMethods, url: string, schema: RouteSchema, handler: RouteHandler, auth = true): void {
    const pattern = `${this.app.prefix}${url}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const match = new RegExp(`^${pattern.replace(/:[A-Za-z]+/g, "[^/]+")}$`);
    this.routes.push({ method, url, schema, auth, match });
    const { summary: _summary, eventStream, download, textMedia, response, ...validation } = schema;
    this.app.route({
      method,
      url,
      bodyLimit: this.options.bodyLimit,
      schema: eventStream || download || textMedia ? validation : { ...validation, response },
      ...(auth ? { onRequest: this.options.authenticate } : {}),
      handler,
    });
  }

  /** The methods declared for a concrete path (its query string ignored); empty for an unknown path. */
  allowedMethods(path: string): string[] {
    const bare = path.split("?")[0] ?? "";
    const methods = this.routes.filter((r) => r.match.test(bare)).map((r) => String(r.method));
    if (methods.includes("GET")) methods.push("HEAD");
    return [...new Set(methods)];
  }

  /** OpenAPI 3.1: JSON Schema 2020-12 objects are valid schema objects as they are. */
  document(info: { title: string; version: string }, prefix = ""): Record<string, unknown> {
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of this.routes) {
      const path = `${prefix}${route.url}`.replace(/:([A-Za-z]+)/g, "{$1}");
      const operation: Record<string, unknown> = { summary: route.schema.summary };
      const parameters: unknown[] = [];
      for (const [where, schema] of [
        ["path", route.schema.params],
        ["query", route.schema.querystring],
      ] as const) {
        const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
        const required = new Set((schema as { required?: string[] } | undefined)?.required ?? []);
        for (const [name, property] of Object.entries(properties)) {
          parameters.push({
            name,
            in: where,
            required: where === "path" || required.has(name),
            schema: property,
          });
        }
      }
      if (parameters.length) operation.parameters = parameters;
      if (route.schema.body) {
        operation.requestBody = {
          required: true,
          content: { "application/json": { schema: route.schema.body } },
        };
      }
      const responses: Record<string, unknown> = {};
      for (const [status, schema] of Object.entries(route.schema.response)) {
        const media =
          status !== "200"
            ? "application/json"
            : route.schema.eventStream
              ? "text/event-stream"
              : route.schema.download
                ? "application/octet-stream"
                : (route.schema.textMedia ?? "application/json");
        responses[status] = { description: status, content: { [media]: { schema } } };
      }
      operation.responses = responses;
      operation.security = route.auth ? [{ bearer: [] }] : [];
      paths[path] ??= {};
      paths[path][route.method.toString().toLowerCase()] = operation;
    }
    return {
      openapi: "3.1.0",
      info,
      paths,
      security: [{ bearer: [] }],
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer", description: BEARER_DESCRIPTION } },
      },
    };
  }
}
