'use strict';

// The tally of one client run: one line per check, then the summary line.

/** Mismatch is a check's own failure: its message says what was expected and what came. */
class Mismatch extends Error {}

/** expect throws a Mismatch unless got equals expected (compared as shown). */
function expect(what, expected, got) {
  const e = show(expected);
  const g = show(got);
  if (e !== g) {
    throw new Mismatch(`${what}expected ${e}, got ${g}`);
  }
}

/** show renders a value so that two renderings are equal only when the values are. */
function show(v) {
  if (v === null || v === undefined) return String(v);
  if (Buffer.isBuffer(v)) return `x'${v.toString('hex')}'`;
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return `${typeof v}:${v}`;
  if (v instanceof Date) return `Date(${v.toISOString()})`;
  return JSON.stringify(v);
}

/** describe renders an unexpected exception, with the server's code where it has one. */
function describe(err) {
  if (err && err.errno !== undefined) {
    return `error ${err.errno}/${err.sqlState}: ${String(err.message).split('\n')[0]}`;
  }
  return `exception: ${err && err.stack ? err.stack.split('\n').slice(0, 2).join(' ') : String(err)}`;
}

class Tally {
  constructor(client) {
    this.client = client;
    this.passed = 0;
    this.failed = 0;
  }

  /** check runs fn; it passes when fn returns without throwing. */
  async check(name, fn) {
    try {
      await fn();
      this.passed++;
      console.log(`ok ${name}`);
    } catch (err) {
      this.fail(name, err instanceof Mismatch ? err.message : describe(err));
    }
  }

  fail(name, msg) {
    this.failed++;
    console.log(`FAIL ${name}: ${msg}`);
  }

  summary() {
    console.log(`clients: ${this.client} ${this.passed} passed, ${this.failed} failed`);
    return this.failed === 0 ? 0 : 1;
  }
}

module.exports = { Tally, Mismatch, expect, show, describe };
