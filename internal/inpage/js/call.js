// Runs with `this` bound to the object a package's library returned: the
// door from Go into the library for calls answered by value. Each argument
// is its own CDP call argument, so elements can be passed by reference.
/** @this {{call(name: string, args: unknown[]): unknown}} */
function (name, ...args) {
  return this.call(name, args);
}
