// Test pages record what happens to them here; the tests read it back.
window.__log = [];
function log(s) {
  window.__log.push(String(s));
}
