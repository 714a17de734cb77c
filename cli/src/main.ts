#!/usr/bin/env node
import { run } from './program.js';

// A reader that stops reading (`trellis ... | head`) ends the command quietly, as it ends `cat`.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
});
