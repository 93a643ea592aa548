#!/usr/bin/env node
// The `gws` command (package.json "bin"): registers tsx and runs the TypeScript entry, so `npm link`
// and `npx gws` work without a build. See cli/gws/main.ts.
import { register } from 'tsx/esm/api';

register();
await import('../cli/gws/entry.ts');
