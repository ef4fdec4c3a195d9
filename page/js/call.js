// Runs with `this` bound to the object that lib.js returned: the one door
// from Go into the library.
function (name, args) {
  return this.call(name, args);
}
