// Side-by-side agent benchmark (issue 13): the same six tasks, each as the
// fixed sequence of tool calls an agent would make with one server's own
// best tools, through livetab mcp, @playwright/mcp and chrome-devtools-mcp,
// all on the system Chromium, headless, against the local site of pages.mjs.
// Prints per task per server: calls, wall time, characters of the results'
// text, and whether the site saw the task done.
//
// Usage: scripts/agents-bench.sh  (or: node run.mjs [--livetab BIN]
// [--chromium PATH] [--only livetab,playwright,devtools] [--verbose])
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { tmpdir, cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSite, articleMarks } from './pages.mjs';
import { livetab } from './livetab.mjs';
import { playwright } from './playwright.mjs';
import { devtools } from './devtools.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values: opt } = parseArgs({
  options: {
    livetab: { type: 'string', default: join(here, '..', '..', 'livetab') },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    only: { type: 'string', default: 'livetab,playwright,devtools' },
    verbose: { type: 'boolean', default: false },
  },
});

const sha = (b) => createHash('sha256').update(b).digest('hex');

// A session is one server and the counts of one task.
class Session {
  constructor(client) { this.client = client; this.reset(); }
  reset() { this.calls = 0; this.chars = 0; this.images = 0; this.seen = ''; this.log = []; }
  // call returns the text of the result; an error result is returned too
  // (an agent reads it), with .error set.
  async call(name, args = {}) {
    this.calls++;
    const t0 = performance.now();
    const res = await this.client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
    let text = '';
    for (const c of res.content ?? []) {
      if (c.type === 'text') text += c.text;
      else if (c.type === 'image') this.images++;
    }
    this.chars += text.length;
    this.seen += '\n' + text;
    this.log.push(`→ ${name} ${JSON.stringify(args).slice(0, 300)}\n${text}`);
    if (opt.verbose) console.error(`→ ${name} ${JSON.stringify(args).slice(0, 300)} (${Math.round(performance.now() - t0)} ms)\n${text.slice(0, 3000)}${text.length > 3000 ? `\n…(${text.length} chars)` : ''}\n`);
    if (res.isError) throw new Error(`${name} failed: ${text.slice(0, 500)}`);
    return text;
  }
}

async function connect(name, command, args, cwd, env) {
  const t = new StdioClientTransport({ command, args, cwd, env: { ...process.env, ...env }, stderr: opt.verbose ? 'inherit' : 'ignore' });
  const client = new Client({ name: 'agents-bench', version: '0' });
  await client.connect(t, { timeout: 120000 });
  return new Session(client);
}

const site = await startSite();
const work = mkdtempSync(join(tmpdir(), 'agents-bench-'));
const photo = Buffer.from('\x89PNG fake photo bytes for the form ' + 'x'.repeat(200));
const report = Buffer.from('%PDF-1.4 quarterly report ' + 'r'.repeat(3000));

// What each task must leave on the site, and in the agent's view.
const tasks = [
  {
    name: 'form (9 fields, submit, check)',
    path: '/form',
    verify: (s, sess) => {
      const want = ['bio=Analyst', 'country=jp', 'email=ada@example.com', 'name=Ada Lovelace',
        `photo=photo.png:${sha(photo).slice(0, 16)}`, 'plan=pro', 'pw=pw-Secret-7', 'terms=on'];
      const got = (s.form ?? []).join('\n');
      if (got !== want.join('\n')) return `server got ${JSON.stringify(s.form)}`;
      if (!sess.seen.includes('Welcome, Ada Lovelace') || !/Your pro plan is ready/.test(sess.seen)) return 'the agent never saw the result page';
    },
  },
  {
    name: 'one button among 2,000',
    path: '/buttons',
    verify: (s) => (s.clicked.size === 1 && s.clicked.has('button-1537') ? undefined : `clicked ${[...s.clicked]}`),
  },
  {
    name: '50 KB article read in full',
    path: '/article',
    verify: (s, sess) => {
      const missing = articleMarks.filter((m) => !sess.seen.includes(m));
      if (missing.length) return `${missing.length} paragraphs never returned (first ${missing[0]})`;
      if (!sess.seen.includes('The end.')) return 'the end never returned';
    },
  },
  {
    name: 'upload a file, check it',
    path: '/upload',
    verify: (s, sess) => {
      if (s.upload?.sha !== sha(report) || s.upload?.name !== 'report.pdf') return `server got ${JSON.stringify(s.upload)}`;
      if (!sess.seen.includes('Uploaded report.pdf')) return 'the agent never saw the page confirm';
    },
  },
  {
    name: 'canvas/blob image out as a file',
    path: '/canvas',
    verify: (s, sess, file) => {
      if (!s.made) return 'the page never made the image';
      if (!file) return 'no file saved';
      const b = readFileSync(file);
      if (b.subarray(1, 4).toString() !== 'PNG') return `${file} is not a PNG`;
      const w = b.readUInt32BE(16), h = b.readUInt32BE(20);
      if (sha(b) === s.made) return undefined;
      // A screenshot of the element is the picture, not the page's file:
      // it passes, marked, when its size is within a few pixels.
      return Math.abs(w - 320) <= 3 && Math.abs(h - 200) <= 3 ? `ok*: a ${w}x${h} screenshot, not the page's bytes` : `a ${w}x${h} PNG, not the 320x200 image`;
    },
  },
  {
    name: 'buttons in shadow DOM + iframe',
    path: '/shadow',
    verify: (s) => (s.clicked.has('shadow') && s.clicked.has('frame') && s.clicked.size === 2 ? undefined : `clicked ${[...s.clicked]}`),
  },
];

const servers = { livetab, playwright, devtools };
const results = [];
for (const key of opt.only.split(',')) {
  const srv = servers[key];
  const dir = join(work, key);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'photo.png'), photo);
  writeFileSync(join(dir, 'report.pdf'), report);
  const { command, args, env } = srv.launch({ dir, livetab: opt.livetab, chromium: opt.chromium, home: join(work, key + '-home') });
  const t0 = performance.now();
  const sess = await connect(key, command, args, dir, env);
  // The browser starts on the first call with some servers: a warm-up
  // load keeps that out of the first task.
  await srv.warm(sess, site.url + '/frame');
  console.error(`${key}: up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  for (const task of tasks) {
    sess.reset();
    site.seen.form = null; site.seen.clicked.clear(); site.seen.upload = null; site.seen.made = null;
    const start = performance.now();
    let err, file;
    try {
      file = await srv.tasks[task.path](sess, site.url + task.path, dir);
    } catch (e) {
      err = e.message;
    }
    const ms = performance.now() - start;
    // The page's own fetches may trail the last call by a moment.
    await new Promise((r) => setTimeout(r, 300));
    const bad = err ?? task.verify(site.seen, sess, file);
    results.push({ task: task.name, server: key, calls: sess.calls, ms, chars: sess.chars, images: sess.images, ok: !bad || bad.startsWith('ok'), note: bad ?? '' });
    const r = results.at(-1);
    console.error(`${key} | ${task.name}: ${r.calls} calls, ${Math.round(ms)} ms, ${r.chars} chars${r.images ? `, ${r.images} image(s)` : ''}, ${r.ok ? 'ok' : 'FAILED'} ${r.note}`);
    if (!r.ok && !opt.verbose) console.error(sess.log.join('\n').slice(-4000));
  }
  await sess.client.close();
}
site.close();

const names = { livetab: 'livetab', playwright: '@playwright/mcp 0.0.83', devtools: 'chrome-devtools-mcp 1.11.0' };
const keys = opt.only.split(',');
let chromium = opt.chromium;
try {
  chromium = execFileSync(opt.chromium, ['--version'], { encoding: 'utf8' }).trim();
} catch {}
console.log(`${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${chromium}, headless, Node ${process.version}\n`);
console.log(`| task | ${keys.map((k) => names[k]).join(' | ')} |`);
console.log(`|---|${keys.map(() => '---').join('|')}|`);
for (const task of tasks) {
  const cells = keys.map((k) => {
    const r = results.find((x) => x.task === task.name && x.server === k);
    if (!r) return '';
    return `${r.calls} calls, ${Math.round(r.ms)} ms, ${r.chars.toLocaleString('en')} ch${r.images ? ` +${r.images} img` : ''}, ${r.ok ? (r.note ? 'ok*' : 'ok') : 'FAIL'}`;
  });
  console.log(`| ${task.name} | ${cells.join(' | ')} |`);
}
for (const r of results.filter((x) => x.note)) console.log(`- ${r.server}, ${r.task}: ${r.note}`);
rmSync(work, { recursive: true, force: true });
process.exit(results.every((r) => r.ok) ? 0 : 1);
