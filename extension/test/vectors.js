// @ts-check
// Loads the test vectors shared with the Go side.
import { readFileSync } from 'node:fs';

const dir = new URL('../../internal/wire/testdata/', import.meta.url);

/**
 * @param {string} name
 * @returns {any}
 */
export function vectors(name) {
  return JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
}
