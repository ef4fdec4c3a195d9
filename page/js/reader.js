// @ts-check
// Reads a page, or one element of it, as Markdown or plain text for a model.
// Evaluates to {markdown(root, max), text(root, max)}; each returns
// {content, truncated}. Hidden elements, scripts and styles are left out;
// open shadow roots and same-origin iframes are read in place.
(function () {
  'use strict';

  const SKIP = new Set([
    'script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title',
    'svg', 'canvas', 'select', 'option', 'datalist', 'input', 'textarea', 'object',
    'embed', 'audio', 'video', 'map',
  ]);
  const BLOCK = new Set([
    'p', 'div', 'section', 'article', 'main', 'header', 'footer', 'nav', 'aside',
    'form', 'fieldset', 'figure', 'figcaption', 'dl', 'dt', 'dd', 'address',
    'details', 'summary', 'legend', 'center', 'body', 'html', 'dialog',
  ]);

  function visible(el) {
    if (!el.checkVisibility) return true;
    return el.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: true });
  }

  function children(el) {
    if (el.localName === 'slot') {
      const a = el.assignedNodes({ flatten: true });
      return a.length ? a : Array.from(el.childNodes);
    }
    if (el.shadowRoot) return Array.from(el.shadowRoot.childNodes);
    if (el.localName === 'iframe' || el.localName === 'frame') {
      /** @type {Document | null} */
      let d = null;
      try {
        d = el.contentDocument;
      } catch (e) {
        d = null;
      }
      return d && d.body ? [d.body] : [];
    }
    return Array.from(el.childNodes);
  }

  function markdown(root, max) {
    max = max > 0 ? max : 20000;
    let size = 0;
    let truncated = false;

    function conv(n, pre, depth) {
      if (truncated) return '';
      if (n.nodeType === 3) {
        const t = pre ? n.data : n.data.replace(/\s+/g, ' ');
        size += t.length;
        if (size > max) truncated = true;
        return t;
      }
      if (n.nodeType === 11) return kids(n, pre, depth);
      if (n.nodeType !== 1) return '';
      const el = n;
      const tag = el.localName;
      if (SKIP.has(tag)) return '';
      if (!visible(el)) return '';
      switch (tag) {
        case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': {
          const t = oneLine(kids(el, pre, depth));
          return t ? '\n\n' + '#'.repeat(Number(tag[1])) + ' ' + t + '\n\n' : '';
        }
        case 'br':
          return '\n';
        case 'hr':
          return '\n\n---\n\n';
        case 'button':
          return ' ' + oneLine(kids(el, pre, depth)) + ' ';
        case 'a': {
          const t = oneLine(kids(el, pre, depth));
          const href = el.getAttribute('href');
          if (!t) return '';
          if (!href || href.startsWith('javascript:') || href === '#') return t;
          return '[' + t.replace(/[[\]]/g, '\\$&') + '](' + el.href + ')';
        }
        case 'img': {
          const alt = (el.getAttribute('alt') || '').trim();
          return alt ? '![' + alt.replace(/[[\]]/g, '') + '](' + (el.currentSrc || el.src) + ')' : '';
        }
        case 'strong': case 'b': {
          const t = kids(el, pre, depth);
          return t.trim() ? '**' + t.trim() + '** ' : t;
        }
        case 'em': case 'i': {
          const t = kids(el, pre, depth);
          return t.trim() ? '*' + t.trim() + '* ' : t;
        }
        case 'code':
          if (pre) return kids(el, true, depth);
          return '`' + oneLine(el.textContent) + '`';
        case 'pre':
          return '\n\n```\n' + (el.innerText || el.textContent).replace(/\n+$/, '') + '\n```\n\n';
        case 'blockquote': {
          const t = tidy(kids(el, pre, depth));
          return '\n\n' + t.split('\n').map((l) => '> ' + l).join('\n') + '\n\n';
        }
        case 'ul': case 'ol': {
          let k = 0;
          const items = [];
          for (const c of el.children) {
            if (c.localName !== 'li' || !visible(c)) continue;
            k++;
            const mark = tag === 'ol' ? k + '. ' : '- ';
            const body = tidy(kids(c, pre, depth + 1)).replace(/\n{2,}/g, '\n');
            if (!body) continue;
            const lines = body.split('\n');
            items.push('  '.repeat(depth) + mark + lines[0] +
              lines.slice(1).map((l) => '\n' + (l ? '  '.repeat(depth + 1) + l.trimStart() : '')).join(''));
          }
          return items.length ? '\n\n' + items.join('\n') + '\n\n' : '';
        }
        case 'li':
          return '\n- ' + oneLine(kids(el, pre, depth)) + '\n';
        case 'table':
          return table(el, depth);
      }
      const t = kids(el, pre, depth);
      if (BLOCK.has(tag)) return '\n\n' + t + '\n\n';
      return t;
    }

    function kids(el, pre, depth) {
      let s = '';
      for (const c of children(el)) {
        s += conv(c, pre, depth);
        if (truncated) break;
      }
      return s;
    }

    function table(el, depth) {
      const rows = [];
      for (const tr of el.querySelectorAll('tr')) {
        if (tr.closest('table') !== el || !visible(tr)) continue;
        const cells = [];
        for (const td of tr.children) {
          if (td.localName !== 'td' && td.localName !== 'th') continue;
          cells.push(oneLine(kids(td, false, depth)).replace(/\|/g, '\\|'));
        }
        if (cells.length) rows.push(cells);
      }
      if (!rows.length) return '';
      const n = Math.max(...rows.map((r) => r.length));
      const line = (r) => '| ' + Array.from({ length: n }, (_, k) => r[k] || '').join(' | ') + ' |';
      const out = [line(rows[0]), '|' + ' --- |'.repeat(n)];
      for (const r of rows.slice(1)) out.push(line(r));
      return '\n\n' + out.join('\n') + '\n\n';
    }

    const content = tidy(conv(root, false, 0));
    return { content: truncated ? cutAt(content, max) : content, truncated };
  }

  function oneLine(s) {
    return (s || '').replace(/\s+/g, ' ').trim();
  }

  // tidy trims each line, joins runs of spaces, and keeps at most one blank
  // line between blocks. Indented list lines keep their indentation.
  function tidy(s) {
    return s.split('\n').map((l) => {
      const m = /^( *)([-*] |\d+\. )/.exec(l);
      const body = l.replace(/[ \t]+/g, ' ').trim();
      return m ? m[1] + body : body;
    }).join('\n').replace(/\n{3,}/g, '\n\n').trim();
  }

  function cutAt(s, max) {
    return s.length > max ? s.slice(0, max) : s;
  }

  function text(root, max) {
    max = max > 0 ? max : 20000;
    const t = (root.innerText != null ? root.innerText : root.textContent || '')
      .replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
    return { content: cutAt(t, max), truncated: t.length > max };
  }

  return { markdown, text };
})()
