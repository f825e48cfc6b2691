// node:test reporter (npm run test:durations): wall time per test file, the sum of its top-level tests and suites
export default async function* fileDurations(source) {
  const per = new Map();
  for await (const ev of source) {
    if ((ev.type === 'test:pass' || ev.type === 'test:fail') && ev.data.nesting === 0 && ev.data.file) {
      const f = ev.data.file.replace(/^.*\/dist\//, '');
      per.set(f, (per.get(f) ?? 0) + (ev.data.details?.duration_ms ?? 0));
    }
  }
  const rows = [...per].sort((a, b) => b[1] - a[1]);
  for (const [f, ms] of rows) yield `${(ms / 1000).toFixed(1).padStart(7)}s ${f}\n`;
  yield `${rows.length} files\n`;
}
