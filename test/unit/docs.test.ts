/**
 * Keeps docs/configuration.md true: every CONFIG_KEYS entry has a row (key, flag, default) in its
 * file's section, every flag `ferry start --help` and `ferry init --help` print is documented, no
 * row documents an option that does not exist, and every genesis.json field is described.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { devGenesis, renderGenesis } from '../../src/config/genesis.js';
import { CONFIG_KEYS } from '../../src/config/keys.js';
import { defaultOptions } from '../../src/config/load.js';
import { FERRY_BIN, REPO_ROOT } from '../helpers/paths.js';

const DOC_PATH = join(REPO_ROOT, 'docs', 'configuration.md');
const doc = readFileSync(DOC_PATH, 'utf8');
const lines = doc.split('\n');
const HELP_TIMEOUT_MS = 30_000;

interface Row {
  cells: string[];
  /** the `## ` and `### ` headings above the row */
  file: string;
  table: string;
}

/** The cells of a Markdown table row (`\|` is a literal bar). */
function cellsOf(line: string): string[] {
  return line
    .slice(1, line.trimEnd().endsWith('|') ? line.trimEnd().length - 1 : undefined)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
}

function tableRows(): Row[] {
  const rows: Row[] = [];
  let file = '';
  let table = '';
  for (const line of lines) {
    if (line.startsWith('## ')) [file, table] = [line.slice(3).trim(), ''];
    else if (line.startsWith('### ')) table = line.slice(4).trim();
    else if (line.startsWith('|') && !/^\|[\s|:-]+\|?$/.test(line)) rows.push({ cells: cellsOf(line), file, table });
  }
  return rows;
}

const rows = tableRows();
const code = (s: string) => '`' + s + '`';
/** rows of the option tables: | key | flag | default | meaning | */
const optionRows = rows.filter((r) => r.cells.length === 4 && r.cells[1]!.startsWith('`--'));

/** Long flags of a `ferry <command> --help`, without --help. */
function helpFlags(command: string): string[] {
  const out = execFileSync(process.execPath, [FERRY_BIN, command, '--help'], { encoding: 'utf8', timeout: HELP_TIMEOUT_MS });
  const flags = new Set<string>();
  for (const line of out.split('\n')) {
    const m = /^\s{2}(?:-\w, )?(--[a-z][\w.-]*)/.exec(line);
    if (m && m[1] !== '--help') flags.add(m[1]!);
  }
  return [...flags];
}

describe('docs/configuration.md', () => {
  it('has a row for every config key: key, flag and default, in its file and table', () => {
    const defaults = defaultOptions('');
    const problems: string[] = [];
    for (const k of CONFIG_KEYS) {
      const row = optionRows.find((r) => r.cells[0] === code(k.key) && r.cells[1] === code(`--${k.name}`));
      if (!row) {
        problems.push(`${k.file} ${k.name}: no row | ${code(k.key)} | ${code(`--${k.name}`)} | … |`);
        continue;
      }
      if (row.file !== k.file) problems.push(`${k.name}: documented under "## ${row.file}", it lives in ${k.file}`);
      const table = k.section === '' ? 'Top level' : code(`[${k.section}]`);
      if (row.table !== table) problems.push(`${k.name}: documented under "### ${row.table}", want "### ${table}"`);
      const shown = code(k.toToml(defaults));
      if (row.cells[2] !== shown) problems.push(`${k.name}: default documented as ${row.cells[2]}, the code's is ${shown}`);
      if (row.cells[3] === '') problems.push(`${k.name}: no meaning`);
    }
    assert.deepEqual(problems, []);
  });

  it('documents every flag of `ferry start --help` and `ferry init --help`', () => {
    const flags = [...helpFlags('start'), ...helpFlags('init')];
    assert.ok(flags.length > CONFIG_KEYS.length, `read ${flags.length} flags from --help`);
    // `--flag` or `--flag <value>`
    assert.deepEqual(flags.filter((f) => !doc.includes(code(f)) && !doc.includes('`' + f + ' <')), []);
  });

  it('documents no option that does not exist', () => {
    const known = new Set(CONFIG_KEYS.map((k) => `--${k.name}`));
    assert.deepEqual(optionRows.map((r) => r.cells[1]!.slice(1, -1)).filter((f) => !known.has(f)), []);
    const keysByFlag = new Map(optionRows.map((r) => [r.cells[1], r]));
    assert.equal(keysByFlag.size, optionRows.length, 'each option has one row');
  });

  it('describes every field of genesis.json', () => {
    const g = JSON.parse(renderGenesis(devGenesis({ validatorPubKey: new Uint8Array(32).fill(7) }))) as Record<string, any>;
    const { consensus_params: cp, app_state: appState, validators, ...top } = g;
    const fields = [
      ...Object.keys(top),
      'validators',
      ...Object.keys(cp.block).map((k) => `consensus_params.block.${k}`),
      ...Object.keys(cp).filter((k) => k !== 'block').map((k) => `consensus_params.${k}`),
      ...Object.keys(validators[0]).map((k) => `validators.${k}`),
      ...Object.keys(appState.evm).map((k) => `app_state.evm.${k}`),
    ];
    const genesisRows = rows.filter((r) => r.file === 'genesis.json').map((r) => r.cells.join(' | '));
    assert.ok(genesisRows.length > 0, 'a genesis.json table');
    const last = (f: string) => f.split('.').pop()!;
    const documented = (f: string) =>
      genesisRows.some((r) => [code(f), code(f + '[]'), code('.' + last(f)), code(last(f))].some((c) => r.includes(c)) && r.length > 0);
    assert.deepEqual(fields.filter((f) => !documented(f)), []);
  });
});
