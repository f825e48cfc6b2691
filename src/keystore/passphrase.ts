/**
 * Passphrases for the `ferry keys` commands: from a file (`--password-file`, its first line, as
 * geth's --password), else typed at a terminal without echo, else the first line of standard input
 * (scripts: `echo pass | ferry keys new`).
 */
import { badConfig, cancelled, invalidRequest } from '../lib/errors.js';
import { readFileSync } from 'node:fs';

/** bigger password files or stdin are not read further */
const MAX_PASSPHRASE_INPUT = 64 * 1024;
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACE = new Set(['\u007f', '\b']);

function firstLine(text: string): string {
  const i = text.search(/\r?\n/);
  return i < 0 ? text : text.slice(0, i);
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      if (text.length < MAX_PASSPHRASE_INPUT) text += chunk;
    });
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}

/** Reads a line from the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  let typed = '';
  return new Promise((resolve, reject) => {
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === CTRL_D) return finish();
        if (ch === CTRL_C) return finish(cancelled('interrupted'));
        if (BACKSPACE.has(ch)) typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/**
 * A passphrase from `file`, the terminal (asked twice when `confirm`), or stdin. `what` names it in
 * the prompt ("Passphrase").
 */
export async function readPassphrase(opts: { file?: string; confirm?: boolean; what?: string }): Promise<string> {
  const what = opts.what ?? 'Passphrase';
  if (opts.file !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.file, 'utf8').slice(0, MAX_PASSPHRASE_INPUT);
    } catch (e) {
      throw badConfig('password-file', `cannot read the password file ${opts.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    return firstLine(text);
  }
  if (process.stdin.isTTY) {
    const pass = await promptHidden(`${what}: `);
    if (opts.confirm && (await promptHidden(`Repeat ${what.toLowerCase()}: `)) !== pass) {
      throw invalidRequest('the passphrases do not match');
    }
    return pass;
  }
  const text = await readStdin();
  if (text === '') throw invalidRequest('no passphrase: give --password-file, type it at a terminal, or pipe it to standard input');
  return firstLine(text);
}
