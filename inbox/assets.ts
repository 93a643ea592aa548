// The inbox's browser code, bundled by esbuild from inbox/app on first use and kept in memory: no
// build step, no CDN, the same files under `npm start`, `npm run api` and the image (which carries
// the sources). One script, one stylesheet and an icon, all from this origin, as the CSP requires.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { projectRoot } from '../config/paths.ts';

export interface InboxAsset {
  body: Buffer;
  type: string;
}

const APP_DIR = path.join(projectRoot, 'inbox', 'app');

async function bundle(): Promise<Map<string, InboxAsset>> {
  const result = await build({
    entryPoints: [path.join(APP_DIR, 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const js = result.outputFiles[0]!.contents;
  return new Map([
    ['app.js', { body: Buffer.from(js), type: 'text/javascript; charset=utf-8' }],
    ['inbox.css', { body: await readFile(path.join(APP_DIR, 'inbox.css')), type: 'text/css; charset=utf-8' }],
    ['icon.svg', { body: await readFile(path.join(APP_DIR, 'icon.svg')), type: 'image/svg+xml' }],
  ]);
}

let assets: Promise<Map<string, InboxAsset>> | undefined;

/** The inbox's assets by file name; bundled once per process (a failed bundle is tried again next time). */
export function inboxAssets(): Promise<Map<string, InboxAsset>> {
  assets ??= bundle().catch((err: unknown) => {
    assets = undefined;
    throw err;
  });
  return assets;
}

/** Bundles now, in the background, so the first visit does not wait for esbuild (the entry points call it once serving). */
export function warmInboxAssets(onError: (err: Error) => void): void {
  inboxAssets().catch(onError);
}
