/**
 * The route table: each route is declared once with its schema, registered on Fastify from here, and
 * published from the same objects as an OpenAPI 3.1 document (`GET /v1/openapi.json`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import type { RouteSchema } from "./schemas.js";

export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

type Declared = { method: HTTPMethods; url: string; schema: RouteSchema; auth: boolean };

export class RouteTable {
  private readonly routes: Declared[] = [];

  constructor(
    private readonly app: FastifyInstance,
    private readonly options: { bodyLimit: number; authenticate?: RouteHandler },
  ) {}

  add(method: HTTPMethods, url: string, schema: RouteSchema, handler: RouteHandler, auth = true): void {
    this.routes.push({ method, url, schema, auth });
    const { summary: _summary, eventStream, response, ...validation } = schema;
    this.app.route({
      method,
      url,
      bodyLimit: this.options.bodyLimit,
      schema: eventStream ? validation : { ...validation, response },
      ...(auth && this.options.authenticate ? { preHandler: this.options.authenticate } : {}),
      handler,
    });
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
        const media = route.schema.eventStream && status === "200" ? "text/event-stream" : "application/json";
        responses[status] = { description: status, content: { [media]: { schema } } };
      }
      operation.responses = responses;
      if (route.auth && this.options.authenticate) operation.security = [{ bearer: [] }];
      paths[path] ??= {};
      paths[path][route.method.toString().toLowerCase()] = operation;
    }
    return {
      openapi: "3.1.0",
      info,
      paths,
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    };
  }
}
