/**
 * Prints an scrypt hash for `Security.Basic.Users[].Password`.
 *
 *   npm run hash-password -- 's3cret'       # from the argument (visible in shell history)
 *   npm run hash-password                   # prompts without echo
 *   printf 's3cret' | npm run hash-password # from a pipe
 */
import { hashPassword } from '#platform/security/password.js';

async function main(): Promise<void> {
  const password = process.argv[2] ?? (await readPassword());
  if (!password) {
    console.error('No password given.');
    process.exit(1);
  }
  console.log(await hashPassword(password));
}

function readPassword(): Promise<string> {
  return process.stdin.isTTY ? promptHidden('Password: ') : readPipe();
}

async function readPipe(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text.replace(/\r?\n$/, '');
}

/** Reads one line from the terminal in raw mode so the password is never echoed. */
function promptHidden(prompt: string): Promise<string> {
  const { stdin, stderr } = process;
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve) => {
    let password = '';
    const finish = (value: string | undefined) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      stderr.write('\n');
      if (value === undefined) process.exit(130);
      resolve(value);
    };
    const onData = (input: string) => {
      for (const char of input) {
        if (char === '\r' || char === '\n') return finish(password);
        if (char === '\u0003' || char === '\u0004') return finish(undefined); // Ctrl-C, Ctrl-D
        if (char === '\u007f' || char === '\b') password = password.slice(0, -1);
        else password += char;
      }
    };
    stdin.on('data', onData);
  });
}

await main();
