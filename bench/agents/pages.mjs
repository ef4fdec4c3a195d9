// The local site every server is pointed at, and what it saw: each task's
// success is judged here, from what reached the server or what the page
// reported, never from what a tool said it did.
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const sha = (b) => createHash('sha256').update(b).digest('hex');

const form = `<!doctype html><html><head><meta charset="utf-8"><title>Sign up</title></head><body>
<form method="post" action="/submit" enctype="multipart/form-data">
<label>Full name <input name="name"></label>
<label>Email <input name="email" type="email"></label>
<label>Password <input name="pw" type="password"></label>
<label>About you <textarea name="bio"></textarea></label>
<label for="country">Country</label> <select id="country" name="country"><option value="">Choose</option><option value="fr">France</option><option value="jp">Japan</option></select>
<label><input name="news" type="checkbox" checked> Newsletter</label>
<label><input type="radio" name="plan" value="free" checked> Free</label>
<label><input type="radio" name="plan" value="pro"> Pro</label>
<label><input name="terms" type="checkbox"> I accept the terms</label>
<label>Photo <input name="photo" type="file"></label>
<button>Sign up</button>
</form></body></html>`;

function buttons() {
  let b = '';
  for (let i = 1; i <= 2000; i++) b += `<button data-n="${i}">Button ${i}</button>\n`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>Buttons</title></head><body>
<h1>Pick one</h1><p role="status" id="st"></p><div id="all">${b}</div>
<script>all.onclick = (e) => { const n = e.target.dataset.n; if (!n) return;
  fetch('/clicked?what=button-' + n); st.textContent = 'Clicked button ' + n; };</script></body></html>`;
}

// A 50 KB article of 100 paragraphs, each tagged §001…§100 so that reading
// it "in full" can be checked against what came back.
const words = 'the river valley morning light carried quiet stories of markets bridges and old roads where travellers shared bread news and songs before the long winter settled over hills'.split(' ');
export const articleMarks = [];
function article() {
  let seed = 7, body = '';
  for (let p = 1; p <= 100; p++) {
    if (p % 10 === 1) body += `<h2>Part ${(p + 9) / 10}</h2>\n`;
    const mark = '§' + String(p).padStart(3, '0');
    articleMarks.push(mark);
    let s = mark;
    while (s.length < 480) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      s += ' ' + words[seed % words.length];
    }
    body += `<p>${s}.</p>\n`;
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>A long article</title></head><body><article><h1>A long article</h1>\n${body}<p>The end.</p></article></body></html>`;
}

const upload = `<!doctype html><html><head><meta charset="utf-8"><title>Upload</title></head><body>
<h1>Send a report</h1><label>Report <input type="file" id="f"></label><p role="status" id="st">No file yet</p>
<script>f.onchange = async () => { const file = f.files[0];
  const r = await fetch('/upload?name=' + encodeURIComponent(file.name), { method: 'POST', body: file });
  const j = await r.json(); st.textContent = 'Uploaded ' + file.name + ': ' + j.bytes + ' bytes, sha256 ' + j.sha.slice(0, 16); };</script></body></html>`;

// The image exists only as a blob: made by a canvas after a click.
const canvas = `<!doctype html><html><head><meta charset="utf-8"><title>Chart</title></head><body>
<h1>Chart maker</h1><button id="g">Generate chart</button><div id="out"></div>
<script>g.onclick = () => { const c = document.createElement('canvas'); c.width = 320; c.height = 200;
  const x = c.getContext('2d'); x.fillStyle = '#fff'; x.fillRect(0, 0, 320, 200);
  for (let i = 0; i < 8; i++) { x.fillStyle = 'hsl(' + i * 45 + ',70%,50%)'; x.fillRect(10 + i * 38, 190 - (i * 23 % 170) - 10, 30, (i * 23 % 170) + 10); }
  c.toBlob(async (b) => { const d = new Uint8Array(await crypto.subtle.digest('SHA-256', await b.arrayBuffer()));
    await fetch('/made?sha=' + Array.from(d, (v) => v.toString(16).padStart(2, '0')).join(''));
    const img = document.createElement('img'); img.alt = 'Sales chart'; img.src = URL.createObjectURL(b); out.append(img); }, 'image/png'); };</script></body></html>`;

const shadow = `<!doctype html><html><head><meta charset="utf-8"><title>Widgets</title></head><body>
<h1>Widgets</h1><div id="host"></div><iframe src="/frame" title="Settings frame" width="400" height="120"></iframe>
<script>const r = host.attachShadow({ mode: 'open' }); r.innerHTML = '<button>Save draft</button>';
  r.querySelector('button').onclick = () => fetch('/clicked?what=shadow');</script></body></html>`;
const frame = `<!doctype html><html><head><meta charset="utf-8"><title>Settings</title></head><body>
<button onclick="fetch('/clicked?what=frame')">Apply settings</button></body></html>`;

export function startSite() {
  const seen = { form: null, clicked: new Set(), upload: null, made: null };
  const pages = { '/form': form, '/buttons': buttons(), '/article': article(), '/upload': upload, '/canvas': canvas, '/shadow': shadow, '/frame': frame };
  const srv = createServer(async (req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    if (req.method === 'GET' && pages[u.pathname] !== undefined) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(pages[u.pathname]);
    }
    if (u.pathname === '/clicked') { seen.clicked.add(u.searchParams.get('what')); return res.end('ok'); }
    if (u.pathname === '/made') { seen.made = u.searchParams.get('sha'); return res.end('ok'); }
    if (u.pathname === '/upload' && req.method === 'POST') {
      seen.upload = { name: u.searchParams.get('name'), sha: sha(body) };
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ bytes: body.length, sha: sha(body) }));
    }
    if (u.pathname === '/submit' && req.method === 'POST') {
      const fd = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] }, body }).formData();
      const kv = [];
      for (const [k, v] of fd) kv.push(typeof v === 'string' ? `${k}=${v}` : `${k}=${v.name}:${sha(Buffer.from(await v.arrayBuffer())).slice(0, 16)}`);
      seen.form = kv.sort();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(`<!doctype html><title>Welcome</title><h1>Welcome, ${fd.get('name')}</h1><p>Your ${fd.get('plan')} plan is ready.</p>`);
    }
    res.writeHead(404); res.end('not found');
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${srv.address().port}`, seen, close: () => srv.close() });
  }));
}
