/**
 * `--state FILE` (docs/dev-mode.md "Dump and load"): the state is loaded from the file at start (as
 * cheats, pending until the next block) and written back, Anvil's JSON, at a clean exit. The format
 * and its checks are src/evmrpc/devcheats.ts's, shared with anvil_dumpState / anvil_loadState.
 */
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { encodeState, loadState, MAX_STATE_BYTES, type CheatModules } from '../evmrpc/devcheats.js';
import type { Logger } from '../lib/log.js';

/** At start: a missing file is a fresh start; a bad one stops the start with its reason. */
export async function loadStateFile(file: string, modules: CheatModules, log: Logger): Promise<void> {
  if (!existsSync(file)) {
    log.info({ file }, 'no state file yet: it is written at exit');
    return;
  }
  const size = statSync(file).size;
  if (size > MAX_STATE_BYTES) throw new Error(`--state ${file}: ${size} bytes, more than ${MAX_STATE_BYTES} (MAX_STATE_BYTES)`);
  try {
    const accounts = await loadState(modules, readFileSync(file));
    log.info({ file, accounts }, 'loaded the state file (pending until the next block)');
  } catch (e) {
    throw new Error(`--state ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** At a clean exit: the latest state, written beside the file and renamed over it. */
export function dumpStateFile(file: string, reader: CheatModules['reader'], log: Logger): void {
  try {
    const json = encodeState(reader);
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, json);
    renameSync(tmp, file);
    log.info({ file, bytes: json.length }, 'wrote the state file');
  } catch (e) {
    log.error({ file, err: e instanceof Error ? e.message : String(e) }, 'could not write the state file');
  }
}
