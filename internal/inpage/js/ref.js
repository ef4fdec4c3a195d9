// The door for library calls that answer with an element, which Go keeps by
// reference (returnByValue false); null when there is none.
/** @this {Record<string, (...args: unknown[]) => unknown>} */
function (name, ...args) {
  return this[name](...args);
}
