// The door for the hot path: one slice of a registered blob as a bare base64
// string, or {err, msg} when the blob is gone.
/** @this {{read(id: number, off: number, len: number): Promise<string>}} */
function (id, off, len) {
  return this.read(id, off, len).catch((e) => ({
    err: (e && e.code) || 'js',
    msg: (e && e.msg) || String(e && e.stack || e),
  }));
}
