// @playwright/mcp's scripts: refs [ref=…] from browser_snapshot or
// browser_find (0.0.83's actions write their snapshot to a file and return
// only its name, so an agent asks for it), its browser_fill_form, and
// browser_file_upload after the click that opens the file chooser.
import { join } from 'node:path';
import { newFile, ref } from './common.mjs';

const at = (text, re) => ref(text, re, /\[ref=([a-z0-9]+)\]/);

export const playwright = {
  launch: ({ dir, chromium }) => ({
    command: process.execPath,
    args: [join(import.meta.dirname, 'node_modules', '@playwright', 'mcp', 'cli.js'), '--headless', '--isolated', '--no-sandbox',
      '--browser', 'chromium', '--executable-path', chromium, '--output-dir', dir, '--viewport-size', '1280x900'],
  }),
  warm: (s, url) => s.call('browser_navigate', { url }),
  tasks: {
    '/form': async (s, url, dir) => {
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      const f = (name, type, re, value) => ({ name, type, target: at(snap, re), element: name, value });
      await s.call('browser_fill_form', {
        fields: [
          f('Full name', 'textbox', /textbox "Full name"/, 'Ada Lovelace'),
          f('Email', 'textbox', /textbox "Email"/, 'ada@example.com'),
          f('Password', 'textbox', /textbox "Password"/, 'pw-Secret-7'),
          f('About you', 'textbox', /textbox "About you"/, 'Analyst'),
          f('Country', 'combobox', /combobox "Country"/, 'Japan'),
          f('Newsletter', 'checkbox', /checkbox "Newsletter"/, 'false'),
          f('Pro', 'radio', /radio "Pro"/, 'true'),
          f('I accept the terms', 'checkbox', /checkbox "I accept the terms"/, 'true'),
        ],
      });
      await s.call('browser_click', { element: 'Photo', target: at(snap, /"Photo"/) });
      await s.call('browser_file_upload', { paths: [join(dir, 'photo.png')] });
      const out = await s.call('browser_click', { element: 'Sign up', target: at(snap, /button "Sign up"/) });
      if (!out.includes('Welcome, Ada Lovelace')) await s.call('browser_snapshot');
    },
    '/buttons': async (s, url) => {
      await s.call('browser_navigate', { url });
      const out = await s.call('browser_find', { text: 'Button 1537' });
      await s.call('browser_click', { element: 'Button 1537', target: at(out, /"Button 1537"/) });
    },
    '/article': async (s, url) => {
      await s.call('browser_navigate', { url });
      await s.call('browser_snapshot');
    },
    '/upload': async (s, url, dir) => {
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      await s.call('browser_click', { element: 'Report', target: at(snap, /"Report"/) });
      const out = await s.call('browser_file_upload', { paths: [join(dir, 'report.pdf')] });
      if (!out.includes('Uploaded report.pdf')) await s.call('browser_find', { text: 'Uploaded' });
    },
    '/canvas': async (s, url, dir) => {
      const since = Date.now();
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      let out = await s.call('browser_click', { element: 'Generate chart', target: at(snap, /button "Generate chart"/) });
      if (!/img "Sales chart" \[ref/.test(out)) out = await s.call('browser_find', { text: 'Sales chart' });
      await s.call('browser_take_screenshot', { element: 'Sales chart', target: at(out, /img "Sales chart"/), filename: 'chart.png' });
      return newFile(dir, since);
    },
    '/shadow': async (s, url) => {
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      await s.call('browser_click', { element: 'Save draft', target: at(snap, /button "Save draft"/) });
      await s.call('browser_click', { element: 'Apply settings', target: at(snap, /button "Apply settings"/) });
    },
  },
};
