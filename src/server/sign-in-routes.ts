/**
 * `POST /v1/sign-in`, `GET /v1/sign-in`, `POST /v1/sign-out`: the dashboard trades the token for a session
 * cookie (./dashboard-session.ts). These routes take no credential themselves (the sign-in checks the token
 * in its body); the plugin's `onRequest` hook still applies the Host check and, to the two POSTs, the Origin
 * check, so no other origin can sign a browser in or out.
 */
import type { Static } from "typebox";
import { ApiError } from "./api-error.js";
import { cookieValue, type DashboardSessions, SESSION_COOKIE, sessionCookie } from "./dashboard-session.js";
import type { RouteTable } from "./openapi.js";
import { errorResponses, SignInBody, SignInState } from "./schemas.js";

export function registerSignInRoutes(
  routes: RouteTable,
  context: { sessions: DashboardSessions; tokenMatches: (given: string) => boolean; cookiePath: string },
): void {
  const { sessions, tokenMatches, cookiePath } = context;
  const cookieOptions = (protocol: string) => ({ path: cookiePath, secure: protocol === "https" });

  routes.add(
    "POST",
    "/v1/sign-in",
    {
      summary: "Trade the server's token for an HttpOnly session cookie (the dashboard's sign-in)",
      body: SignInBody,
      response: { 200: SignInState, ...errorResponses },
    },
    async (request, reply) => {
      const { token } = request.body as Static<typeof SignInBody>;
      if (!tokenMatches(token)) throw new ApiError(401, "UNAUTHORIZED", "wrong token");
      void reply.header("set-cookie", sessionCookie(sessions.issue(), cookieOptions(request.protocol)));
      void reply.header("cache-control", "no-store");
      return { signedIn: true };
    },
    false,
  );

  routes.add(
    "GET",
    "/v1/sign-in",
    { summary: "Whether this browser's session cookie is valid", response: { 200: SignInState } },
    async (request, reply) => {
      void reply.header("cache-control", "no-store");
      return { signedIn: sessions.valid(cookieValue(request.headers.cookie, SESSION_COOKIE)) };
    },
    false,
  );

  routes.add(
    "POST",
    "/v1/sign-out",
    { summary: "Expire this browser's session cookie", response: { 200: SignInState, ...errorResponses } },
    async (request, reply) => {
      void reply.header("set-cookie", sessionCookie(undefined, cookieOptions(request.protocol)));
      return { signedIn: false };
    },
    false,
  );
}
