// Runs with `this` bound to the object that lib.js returned; evaluates to the
// element a reference names.
/** @this {{elementOf(ref: unknown): Element | null}} */
function (ref) {
  return this.elementOf(ref);
}
