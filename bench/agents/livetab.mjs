// livetab mcp's scripts: indexes [N] from browser_snapshot or browser_find.
import { newFile, ref } from './common.mjs';

const at = (text, re) => Number(ref(text, re, /\[(\d+)\]/));

export const livetab = {
  launch: ({ dir, livetab, chromium, home }) => ({
    command: livetab,
    args: ['mcp', '--launch=headless', '--chrome', chromium, '--allow-domain', '127.0.0.1', '--download-dir', dir, '--upload-dir', dir],
    env: { HOME: home, XDG_CONFIG_HOME: home + '/.config' },
  }),
  warm: (s, url) => s.call('browser_navigate', { url }),
  tasks: {
    '/form': async (s, url) => {
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      const out = await s.call('browser_fill_form', {
        fields: [
          { index: at(snap, /textbox "Full name"/), text: 'Ada Lovelace' },
          { index: at(snap, /textbox "Email"/), text: 'ada@example.com' },
          { index: at(snap, /textbox "Password"/), text: 'pw-Secret-7' },
          { index: at(snap, /textbox "About you"/), text: 'Analyst' },
          { index: at(snap, /combobox "Country"/), values: ['Japan'] },
          { index: at(snap, /checkbox "Newsletter"/), checked: false },
          { index: at(snap, /radio "Pro"/), checked: true },
          { index: at(snap, /checkbox "I accept the terms"/), checked: true },
          { index: at(snap, /"Photo"/), files: ['photo.png'] },
        ],
        submit_index: at(snap, /button "Sign up"/),
      });
      if (!out.includes('Welcome, Ada Lovelace')) await s.call('browser_read');
    },
    '/buttons': async (s, url) => {
      await s.call('browser_navigate', { url });
      const found = await s.call('browser_find', { text: 'Button 1537' });
      await s.call('browser_click', { index: at(found, /"Button 1537"/) });
    },
    '/article': async (s, url) => {
      await s.call('browser_navigate', { url });
      // One read returns a long article whole; a longer text says the
      // offset to read on with and its total, and the rest is asked for at
      // once (livetab lowers max_chars to the person's --max-page-text cap).
      let out = await s.call('browser_read');
      for (let m; (m = out.match(/of ([\d,]+); read on with offset=(\d+)/)); ) {
        const next = Number(m[2]);
        out = await s.call('browser_read', { offset: next, max_chars: Number(m[1].replace(/,/g, '')) - next });
      }
    },
    '/upload': async (s, url) => {
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      const out = await s.call('browser_upload', { index: at(snap, /"Report"/), files: ['report.pdf'] });
      if (!out.includes('Uploaded report.pdf')) await s.call('browser_snapshot', { text: true });
    },
    '/canvas': async (s, url, dir) => {
      const since = Date.now();
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      const out = await s.call('browser_click', { index: at(snap, /button "Generate chart"/) });
      // The click's changes give a blob: image's URL; else find its index.
      const blob = out.match(/img "Sales chart" \(blob: image\) src=(blob:\S+)/);
      if (blob) await s.call('browser_capture', { url: blob[1] });
      else await s.call('browser_capture', { index: at(await s.call('browser_find', { role: 'img' }), /Sales chart/) });
      return newFile(dir, since);
    },
    '/shadow': async (s, url) => {
      await s.call('browser_navigate', { url });
      const snap = await s.call('browser_snapshot');
      await s.call('browser_click', { index: at(snap, /button "Save draft"/) });
      await s.call('browser_click', { index: at(snap, /button "Apply settings"/) });
    },
  },
};
