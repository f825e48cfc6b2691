/** Renders commented app.toml and config.toml from option values (defaults for a new home). */
import { CONFIG_KEYS, type ConfigFile } from './keys.js';
import type { NodeOptions } from './options.js';

const HEADERS: Readonly<Record<ConfigFile, string>> = {
  'app.toml': [
    '# ferry application configuration (Evmos-style app.toml).',
    '# Precedence: command-line flag > this file > built-in default.',
    '# Every key below can also be given as a flag: --<section>.<key>, e.g. --json-rpc.api.',
    '# Durations are Go-style strings: "500ms", "5s", "2m0s", "1m30s".',
  ].join('\n'),
  'config.toml': [
    '# ferry consensus-engine configuration (CometBFT v0.38-style config.toml).',
    '# Precedence: command-line flag > this file > built-in default.',
    '# Every key below can also be given as a flag: --<section>.<key>, e.g. --rpc.laddr.',
    '# Durations are Go-style strings: "500ms", "1s", "10s".',
  ].join('\n'),
};

const SECTION_TITLES: Readonly<Record<string, string>> = {
  'json-rpc': 'EVM JSON-RPC server (Surface A)',
  'state-sync': 'state-sync snapshots (under CometBFT)',
  rpc: 'consensus RPC server (Surface B, CometBFT-compatible)',
  consensus: 'block production',
  mempool: 'transaction pool',
  instrumentation: 'Prometheus metrics of the consensus engine',
};

export function renderAppToml(opts: NodeOptions): string {
  return render('app.toml', opts);
}

export function renderConfigToml(opts: NodeOptions): string {
  return render('config.toml', opts);
}

function render(file: ConfigFile, opts: NodeOptions): string {
  const lines: string[] = [HEADERS[file], ''];
  let section = '';
  for (const key of CONFIG_KEYS) {
    if (key.file !== file) continue;
    if (key.section !== section) {
      section = key.section;
      lines.push('#'.repeat(72), `### ${SECTION_TITLES[section] ?? section}`, '#'.repeat(72), '', `[${section}]`, '');
    }
    lines.push(`# ${key.help}`, `${key.key} = ${key.toToml(opts)}`, '');
  }
  return lines.join('\n');
}
