// Run in an isolated world: the element that holds the focus of the
// document when it shows a frame this world cannot enter, else null. The
// builtins and the DOM's getters here are the browser's own. It walks down
// through open shadow roots (document.activeElement is a shadow tree's
// host: a page put its frame in one) and through the frames of the
// document's origin, whose documents it can read (an editor in a frame of
// the page's own).
(() => {
  /** @type {Document} */
  let d = document;
  for (let depth = 0; depth < 32; depth++) {
    let e = d.activeElement;
    while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
    if (!e || !/^(iframe|frame|object|embed|fencedframe|portal)$/.test(e.localName)) return null;
    /** @type {Document | null} */
    let inner = null;
    try {
      inner = /** @type {HTMLIFrameElement} */ (e).contentDocument;
    } catch (x) {
      inner = null;
    }
    if (!inner) return e;
    d = inner;
  }
  return null;
})()
