// Runs with `this` bound to the object that lib.js returned: the one door
// from Go into the library.
/** @this {{call(name: string, args: unknown[]): unknown}} */
function (name, args) {
  return this.call(name, args);
}
