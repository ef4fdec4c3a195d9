// chrome-devtools-mcp's scripts: uids from take_snapshot (or from the
// snapshot an action includes on request), its fill_form and upload_file.
import { join } from 'node:path';
import { newFile, ref } from './common.mjs';

const at = (text, re) => ref(text, re, /uid=(\S+)/);

export const devtools = {
  launch: ({ dir, chromium }) => ({
    command: process.execPath,
    args: [join(import.meta.dirname, 'node_modules', 'chrome-devtools-mcp', 'build', 'src', 'bin', 'chrome-devtools-mcp.js'),
      '--headless', '--isolated', '--executablePath', chromium, '--chromeArg=--no-sandbox', '--viewport', '1280x900',
      '--no-usage-statistics', '--no-performance-crux', '--no-page-id-routing'],
    env: { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1', CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1' },
  }),
  warm: (s, url) => s.call('navigate_page', { type: 'url', url }),
  tasks: {
    '/form': async (s, url, dir) => {
      await s.call('navigate_page', { type: 'url', url });
      const snap = await s.call('take_snapshot');
      const f = (re, value) => ({ uid: at(snap, re), value });
      await s.call('fill_form', {
        elements: [
          f(/textbox "Full name"/, 'Ada Lovelace'),
          f(/textbox "Email"/, 'ada@example.com'),
          f(/textbox "Password"/, 'pw-Secret-7'),
          f(/textbox "About you"/, 'Analyst'),
          f(/combobox "Country"/, 'Japan'),
          f(/checkbox "Newsletter"/, 'false'),
          f(/radio "Pro"/, 'true'),
          f(/checkbox "I accept the terms"/, 'true'),
        ],
      });
      await s.call('upload_file', { uid: at(snap, /"Photo"/), filePaths: [join(dir, 'photo.png')] });
      const out = await s.call('click', { uid: at(snap, /button "Sign up"/), includeSnapshot: true });
      if (!out.includes('Welcome, Ada Lovelace')) await s.call('take_snapshot');
    },
    '/buttons': async (s, url) => {
      await s.call('navigate_page', { type: 'url', url });
      const snap = await s.call('take_snapshot');
      await s.call('click', { uid: at(snap, /button "Button 1537"/) });
    },
    '/article': async (s, url) => {
      await s.call('navigate_page', { type: 'url', url });
      await s.call('take_snapshot');
    },
    '/upload': async (s, url, dir) => {
      await s.call('navigate_page', { type: 'url', url });
      const snap = await s.call('take_snapshot');
      const out = await s.call('upload_file', { uid: at(snap, /"Report"/), filePaths: [join(dir, 'report.pdf')], includeSnapshot: true });
      if (!out.includes('Uploaded report.pdf')) await s.call('take_snapshot');
    },
    '/canvas': async (s, url, dir) => {
      const since = Date.now();
      await s.call('navigate_page', { type: 'url', url });
      const snap = await s.call('take_snapshot');
      let out = await s.call('click', { uid: at(snap, /button "Generate chart"/), includeSnapshot: true });
      // The click may return before the page made the image: wait for it.
      if (!/uid=\S+ image "Sales chart"/.test(out)) out = await s.call('wait_for', { text: ['Sales chart'] });
      await s.call('take_screenshot', { uid: at(out, /image "Sales chart"/), filePath: join(dir, 'chart.png') });
      return newFile(dir, since);
    },
    '/shadow': async (s, url) => {
      await s.call('navigate_page', { type: 'url', url });
      const snap = await s.call('take_snapshot');
      await s.call('click', { uid: at(snap, /button "Save draft"/) });
      await s.call('click', { uid: at(snap, /button "Apply settings"/) });
    },
  },
};
