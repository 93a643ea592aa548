// GET /inbox: the approvals inbox, a page of this API (same origin) whose code comes from the package
// (inbox/assets.ts). The page holds no secret and takes no cookie: it calls the public API with the
// operator's key as a Bearer header. Its headers keep whatever a run holds inert even if a value
// were ever rendered as markup: scripts only from this origin, no inline script or eval, no plugins,
// no framing, no referrer, no sniffing.
import { z } from 'zod';
import { errors } from '../../domain/errors.ts';
import { inboxAssets } from '../../inbox/assets.ts';
import { defineRoute } from '../contract/route.ts';

export const INBOX_SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
} as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Approvals inbox · Governed Workspace Service</title>
  <link rel="icon" href="/inbox/assets/icon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/inbox/assets/inbox.css">
  <script type="module" src="/inbox/assets/app.js"></script>
</head>
<body>
  <div id="app"></div>
  <noscript>The approvals inbox needs JavaScript.</noscript>
</body>
</html>
`;

export function inboxRoutes() {
  return [
    defineRoute({
      method: 'get',
      path: '/inbox',
      operationId: 'getInbox',
      summary: 'The approvals inbox (extension): a web page for operators',
      description:
        'Lists the runs awaiting approval live, shows each effect with its exact arguments and `args_digest`, and approves, edits or rejects through this API. Sign in with a core key; the page keeps it in the tab (sessionStorage) and sends it as a Bearer header. See docs/inbox.md.',
      tags: ['meta'],
      auth: 'none',
      responses: { 200: { description: 'The page (HTML); its script and styles come from /inbox/assets/.', contentType: 'text/html' } },
      handler: () => ({
        status: 200,
        body: PAGE,
        headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache', ...INBOX_SECURITY_HEADERS },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/inbox/assets/{file}',
      operationId: 'getInboxAsset',
      summary: 'Script, styles or icon of the inbox',
      tags: ['meta'],
      auth: 'none',
      hidden: true,
      request: { params: z.object({ file: z.string().max(64) }) },
      responses: { 200: { description: 'Asset.' } },
      handler: async ({ params }) => {
        const asset = (await inboxAssets()).get(params.file);
        if (!asset) throw errors.notFound();
        return { status: 200, body: asset.body, headers: { 'Content-Type': asset.type, 'Cache-Control': 'no-cache', ...INBOX_SECURITY_HEADERS } };
      },
    }),
  ];
}
