// Type-checks the JavaScript that Go sends into pages (page/js, capture/js,
// upload/js, internal/inpage/js, internal/hit/js) with the extension's
// TypeScript, as strictly as the extension. Most of these files are bare
// function declarations or expressions that Go hands to
// Runtime.callFunctionOn or Runtime.evaluate, which no JavaScript parser
// takes as a script; the check reads a copy wrapped in parentheses (on the
// first and last lines, so the line numbers stay), and the files stay what
// Chrome runs.
//
// strict but for noImplicitAny: about 230 parameters still have no JSDoc
// type; turning it on is the next step.
//
//   node scripts/check-inpage-js.mjs        (from the repository root)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const dirs = ['page/js', 'capture/js', 'upload/js', 'internal/inpage/js', 'internal/hit/js'];
const tmp = mkdtempSync(join(tmpdir(), 'livetab-inpage-check-'));
try {
  const files = [];
  for (const d of dirs) {
    mkdirSync(join(tmp, d), { recursive: true });
    for (const f of readdirSync(join(root, d))) {
      if (!f.endsWith('.js')) continue;
      const src = readFileSync(join(root, d, f), 'utf8').trimEnd();
      writeFileSync(join(tmp, d, f), '(' + src + '\n);\n');
      files.push(join(d, f));
    }
  }
  writeFileSync(join(tmp, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      checkJs: true, allowJs: true, noEmit: true, strict: true, noImplicitAny: false,
      noImplicitReturns: true, noFallthroughCasesInSwitch: true,
      target: 'es2022', lib: ['esnext', 'dom', 'dom.iterable'], types: [], skipLibCheck: true,
    },
    files,
  }));
  const tsc = join(root, 'extension', 'node_modules', '.bin', 'tsc');
  try {
    execFileSync(tsc, ['-p', join(tmp, 'tsconfig.json'), '--pretty', 'false'], { cwd: tmp, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    const err = /** @type {{stdout?: string, stderr?: string}} */ (e);
    process.stderr.write((err.stdout || '') + (err.stderr || ''));
    process.exitCode = 1;
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
