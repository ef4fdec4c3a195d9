import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// newFile is the newest file under dir that the runner did not put there:
// what a capture or screenshot saved.
export function newFile(dir, since) {
  let best;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!['photo.png', 'report.pdf'].includes(e.name) && statSync(p).mtimeMs >= since && (!best || statSync(p).mtimeMs > statSync(best).mtimeMs)) best = p;
    }
  };
  walk(dir);
  return best;
}

// ref finds the reference a snapshot line gives an element: the first line
// that matches re, and the reference pattern of that server on it.
export function ref(text, re, refRe) {
  for (const line of text.split('\n')) {
    if (re.test(line)) {
      const m = line.match(refRe);
      if (m) return m[1];
    }
  }
  throw new Error(`no ${re} with a reference in:\n${text.slice(0, 2000)}`);
}
