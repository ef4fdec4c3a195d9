// The fake generation studio: a prompt, a reference-image input, a drop zone
// and a paste target; "Generate" asks the server for a job, waits, and
// shows an image made on a canvas (as a blob: URL), a video streamed with
// range requests, the same kind of video as a blob, an audio clip, and a
// Download button for a file that only comes as an attachment. Everything
// the page receives by upload is posted back to the server, which records
// it for the tests.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const status = $('status');
  const SMALL_LIMIT = 64 * 1024;

  async function send(via, file) {
    const q = new URLSearchParams({ via, name: file.name, type: file.type, lastModified: String(file.lastModified) });
    const r = await fetch('/upload?' + q, { method: 'POST', body: file });
    status.textContent = 'uploaded ' + file.name + ' via ' + via + ': ' + r.status;
  }

  $('ref').addEventListener('change', (e) => {
    for (const f of e.target.files) send('input', f);
  });
  $('multi').addEventListener('change', (e) => {
    for (const f of e.target.files) send('multi', f);
  });
  $('small').addEventListener('change', (e) => {
    const input = e.target;
    const f = input.files[0];
    if (!f) return;
    if (f.size > SMALL_LIMIT) {
      input.setCustomValidity('File too large: the limit is 64 KB');
      input.value = '';
      status.textContent = 'rejected ' + f.name;
      return;
    }
    input.setCustomValidity('');
    send('small', f);
  });

  const drop = $('drop');
  for (const t of ['dragenter', 'dragover']) {
    drop.addEventListener(t, (e) => {
      e.preventDefault();
      drop.classList.add('over');
    });
  }
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    for (const f of e.dataTransfer.files) send('drop', f);
  });

  // A drop zone that, like some sites, ignores events no person made.
  const trusted = $('trusted-drop');
  trusted.addEventListener('dragover', (e) => {
    if (e.isTrusted) e.preventDefault();
  });
  trusted.addEventListener('drop', (e) => {
    if (!e.isTrusted) return;
    e.preventDefault();
    for (const f of e.dataTransfer.files) send('trusted-drop', f);
  });

  $('paste').addEventListener('paste', (e) => {
    const files = e.clipboardData && e.clipboardData.files;
    if (!files || !files.length) return;
    e.preventDefault();
    for (const f of files) send('paste', f);
  });

  function draw(prompt, seed) {
    const c = document.createElement('canvas');
    c.id = 'result-canvas';
    c.width = 256;
    c.height = 192;
    const g = c.getContext('2d');
    let x = seed >>> 0;
    const rnd = () => {
      x ^= x << 13; x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5; x >>>= 0;
      return x / 4294967296;
    };
    g.fillStyle = '#224';
    g.fillRect(0, 0, c.width, c.height);
    for (let i = 0; i < 40; i++) {
      g.fillStyle = 'hsl(' + Math.floor(rnd() * 360) + ',70%,55%)';
      g.fillRect(rnd() * 256, rnd() * 192, 8 + rnd() * 60, 8 + rnd() * 60);
    }
    g.fillStyle = '#fff';
    g.font = '16px sans-serif';
    g.fillText(prompt.slice(0, 30), 8, 180);
    return c;
  }

  function toBlob(c) {
    return new Promise((resolve) => c.toBlob(resolve, 'image/png'));
  }

  function el(tag, id, props) {
    const e = document.createElement(tag);
    e.id = id;
    Object.assign(e, props || {});
    return e;
  }

  $('generate').addEventListener('click', async () => {
    const prompt = $('prompt').value;
    status.textContent = 'generating';
    const r = await fetch('/generate', { method: 'POST', body: prompt });
    const job = await r.json();
    await new Promise((res) => setTimeout(res, job.delayMs));
    const out = $('out');

    const canvas = draw(prompt, job.seed);
    $('work').append(canvas);
    const png = await toBlob(canvas);
    // Tell the server what was generated before showing it, so the hash is
    // there when a test sees the image.
    await fetch('/report?kind=image', { method: 'POST', body: png });
    out.append(el('img', 'result-image', { src: URL.createObjectURL(png), alt: 'result' }));

    out.append(el('video', 'result-video', { src: job.video, controls: true, preload: 'metadata' }));
    out.append(el('audio', 'result-audio', { src: job.audio, controls: true, preload: 'auto' }));

    const vb = await (await fetch(job.blobVideo)).blob();
    out.append(el('video', 'result-blobvideo', { src: URL.createObjectURL(vb), controls: true }));

    const dl = el('button', 'download', { textContent: 'Download' });
    dl.addEventListener('click', () => {
      location.href = job.download;
    });
    out.append(dl);

    const bl = el('button', 'download-blob', { textContent: 'Save clip' });
    bl.addEventListener('click', () => {
      const a = document.createElement('a');
      a.href = URL.createObjectURL(vb);
      a.download = 'clip-' + job.id + '.webm';
      document.body.append(a);
      a.click();
      a.remove();
    });
    out.append(bl);

    const broken = el('button', 'download-broken', { textContent: 'Broken download' });
    broken.addEventListener('click', () => {
      location.href = job.broken;
    });
    out.append(broken);

    out.append(el('a', 'download-link', { href: job.download, textContent: 'direct link' }));
    status.textContent = 'done ' + job.id;
  });
})();
