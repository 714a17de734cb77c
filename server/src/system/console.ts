import { readFile } from 'node:fs/promises';
import express from 'express';
import type { RequestHandler, Response } from 'express';
import type { TrellisConfig } from '#platform/config/types.js';
import { installPath } from '#platform/install-root.js';
import { routeNotFound } from '../errors.js';
import { HttpError } from '../http-error.js';
import { staticFiles } from './static-files.js';

/** Where `npm run build` puts the console (scripts/build/build-console.mjs). */
const consoleDirectory = installPath('console', 'dist');

/**
 * The console's page may load and reach only what this server serves (and, with single sign-on,
 * call the provider's endpoints: its discovery and token exchange): no inline script or style,
 * no other origin, no framing, no plugins, forms only to itself.
 */
export function consoleContentSecurityPolicy(config: TrellisConfig): string {
  const { Enabled, Issuer } = config.Security.Oidc;
  const provider = Enabled && Issuer ? ` ${new URL(Issuer).origin}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${provider}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function secure(res: Response, policy: string): void {
  res.setHeader('Content-Security-Policy', policy);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

const escapeAttribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Where approval links point (`/approvals/decide/{token}`, in the contract). */
const approvalLinkPath = /^\/approvals\/decide\/([^/]+)$/;

/**
 * Whether the request is the console's: `/ui` and below, served by `consoleRoutes`, and a browser
 * opening the server's root or an approval link (it asks for HTML; API clients get the API's
 * answer there: a 404, the link's JSON).
 */
export function isConsolePath(path: string, accept?: string): boolean {
  return (
    path === '/ui' ||
    path.startsWith('/ui/') ||
    ((path === '/' || approvalLinkPath.test(path)) && wantsHtml(accept))
  );
}

function wantsHtml(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/html\b/.test(accept);
}

/**
 * The web console at `/ui`: its page for `/ui` and every path below it (the console routes on
 * the client), and its content-hashed assets under `/ui/assets/`, cached for good. Outside the
 * contract, like `/docs`: static files, no credentials (the console signs in through the API).
 * The page carries where the Temporal UI shows this namespace's workflows (`Temporal.UiUrl`),
 * for the run page's link; empty when there is none.
 */
export function consoleRoutes(config: TrellisConfig): RequestHandler {
  const { UiUrl, Namespace } = config.Temporal;
  const policy = consoleContentSecurityPolicy(config);
  const temporalWorkflows = UiUrl
    ? `${UiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(Namespace)}/workflows/`
    : '';
  let page: Promise<string> | null = null;
  // Read once it is first asked for (a build may come after the start); again after a failure.
  const loadPage = () =>
    (page ??= readFile(`${consoleDirectory}/index.html`, 'utf8').then(
      (html) =>
        html.replace(
          '<meta name="trellis-temporal-ui" content="" />',
          `<meta name="trellis-temporal-ui" content="${escapeAttribute(temporalWorkflows)}" />`,
        ),
      (error: unknown) => {
        page = null;
        throw error;
      },
    ));

  const router = express.Router({ caseSensitive: true, strict: false });
  router.use(
    '/ui/assets',
    staticFiles(`${consoleDirectory}/assets`, {
      index: false,
      immutable: true,
      maxAge: '365d',
      fallthrough: true,
      setHeaders: (res) => secure(res, policy),
    }),
  );
  router.get('/ui/assets/{*rest}', (req, _res, next) => next(routeNotFound(req.method, req.path)));
  router.get(['/ui', '/ui/{*rest}'], (_req, res, next) => {
    loadPage().then(
      (html) => {
        secure(res, policy);
        // The page names the current assets: always asked for again, never stale.
        res.setHeader('Cache-Control', 'no-cache');
        res.type('html').send(html);
      },
      () =>
        next(
          new HttpError(
            404,
            'The console is not built into this installation: run `npm run build` (or `npm start`, which builds it).',
          ),
        ),
    );
  });
  // A browser opening the address the start printed gets the console.
  router.get('/', (_req, res) => res.redirect(302, '/ui/'));
  // A browser opening an approval link gets the console's decision page for it.
  router.get('/approvals/decide/:token', (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, `/ui/decide/${encodeURIComponent(String(req.params.token))}`);
  });
  // API requests pass by without walking these routes.
  return (req, res, next) => {
    if (isConsolePath(req.path, req.headers.accept)) router(req, res, next);
    else next();
  };
}
