// The process around `gws` (bin/gws.mjs imports this): runs the command and exits with its code.
import { main } from './main.ts';

// A reader that stopped early (`gws runs export | head -1`) is not an error of ours.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const code = await main(process.argv.slice(2));
// Exit once what was written is out (a pipe may still hold it), even if a kept-alive socket lingers.
process.exitCode = code;
process.stdout.write('', () => process.exit(code));
