// When anything under a path last changed: the newest mtime of a file or of any file below a folder.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** 0 when the path does not exist. */
export function newestMtime(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) {
    return stats.mtimeMs;
  }
  return readdirSync(path).reduce(
    (newest, name) => Math.max(newest, newestMtime(join(path, name))),
    stats.mtimeMs,
  );
}
