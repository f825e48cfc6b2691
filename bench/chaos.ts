/**
 * `npm run chaos [-- --minutes 10 --seed N --no-namespaces --line 0.39]` — fault injection on a real
 * 4-validator CometBFT network of ferry nodes under load (test/helpers/chaos.ts; docs/abci.md "Fault
 * injection"). Prints the report and exits 1 when any invariant broke: a divergent height, an
 * acknowledged transaction missing or different on a node, or a chain not live again after a heal.
 */
import { parseArgs } from 'node:util';
import { formatChaosReport, runChaos } from '../test/helpers/chaos.js';
import { COMETBFT_LINES, findCometbft, type CometLine } from '../test/helpers/cometnet.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    seed: { type: 'string' },
    'no-namespaces': { type: 'boolean', default: false },
    line: { type: 'string', default: '0.38' },
  },
});
const line = values.line as CometLine;
if (!(line in COMETBFT_LINES)) throw new Error(`--line: one of ${Object.keys(COMETBFT_LINES).join(', ')}`);
const cometBin = findCometbft(line);
if (!cometBin) throw new Error(`no cometbft v${line} binary (see docs/abci.md "Tests")`);
const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
const durationMs = Number(values.minutes) * 60_000;
if (!(durationMs > 0)) throw new Error('--minutes: a positive number');

const report = await runChaos({ cometBin, durationMs, seed, namespaces: !values['no-namespaces'], log: (l) => process.stderr.write(l + '\n') });
process.stdout.write(formatChaosReport(report) + '\n');
const failed = report.divergences.length > 0 || report.txs.lost > 0 || report.liveFailures.length > 0;
process.exitCode = failed ? 1 : 0;
