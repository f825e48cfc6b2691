/** File helpers. */
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `text` to `path` atomically with `mode`: a temporary file beside it, fsync, rename, then a
 * best-effort fsync of the directory. A crash leaves the old file or the new one, never half of one.
 */
export function writeFileAtomic(path: string, text: string, mode: number): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    fchmodSync(fd, mode); // the umask may have narrowed it; never widened
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
  try {
    const dfd = openSync(dir, 'r');
    fsyncSync(dfd);
    closeSync(dfd);
  } catch {
    // some filesystems cannot fsync a directory; the rename is still atomic
  }
}
