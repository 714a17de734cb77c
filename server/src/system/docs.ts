import { createRequire } from 'node:module';
import express from 'express';
import type { Express } from 'express';
import { openApiJson, readOpenApiYaml } from '../openapi.js';
import { staticFiles } from './static-files.js';

const require = createRequire(import.meta.url);
// swagger-ui-dist is CommonJS and ships no types; it exposes where its assets live.
const swaggerUiDirectory = (
  require('swagger-ui-dist') as { getAbsoluteFSPath(): string }
).getAbsoluteFSPath();

const docsPage = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Trellis API reference</title>
    <link rel="stylesheet" href="/docs/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js" charset="utf-8"></script>
    <script src="/docs/swagger-ui-standalone-preset.js" charset="utf-8"></script>
    <script src="/docs/swagger-initializer.js" charset="utf-8"></script>
  </body>
</html>
`;

// Points the UI at this server's own document; replaces swagger-ui-dist's petstore initializer.
const initializer = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
  });
};
`;

/** Whether a request path may be one of the documentation routes (Express decides which). */
export function isDocumentationPath(path: string): boolean {
  const lower = path.toLowerCase();
  return lower.startsWith('/docs') || lower.startsWith('/openapi.');
}

/**
 * The public documentation routes, outside the spec: `/openapi.json`, `/openapi.yaml` and an
 * interactive reference at `/docs` served entirely from local assets (works offline). An Express
 * app of its own (static files, content types); a request none of them serves goes to the
 * callback it is called with.
 */
export function documentationApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  const router = express.Router();
  const yaml = readOpenApiYaml();
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openApiJson);
  });
  if (yaml !== null) {
    router.get('/openapi.yaml', (_req, res) => {
      res.type('application/yaml').send(yaml);
    });
  }
  router.get(['/docs', '/docs/', '/docs/index.html'], (_req, res) => {
    res.type('html').send(docsPage);
  });
  router.get('/docs/swagger-initializer.js', (_req, res) => {
    res.type('application/javascript').send(initializer);
  });
  router.use('/docs', staticFiles(swaggerUiDirectory, { index: false }));
  app.use(router);
  return app;
}
