// Runs with `this` bound to the object that lib.js returned; evaluates to the
// iframe element of frame f of the last snapshot.
/** @this {{frameEl(f: number): Element | null}} */
function (f) {
  return this.frameEl(f);
}
