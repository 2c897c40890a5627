"""Check bookkeeping: one line per check, a summary line, and the exit code."""

import sys
import threading
import traceback


class Mismatch(Exception):
    """A check saw something other than what it expected; the message says both."""


def expect(cond, message):
    """Raises Mismatch(message) unless cond holds."""
    if not cond:
        raise Mismatch(message)


def expect_eq(want, got, what=""):
    """Raises Mismatch unless want == got, naming both."""
    if not (type(want) is type(got) or _both_numbers(want, got)) or want != got:
        prefix = f"{what}: " if what else ""
        raise Mismatch(f"{prefix}expected {want!r}, got {got!r}")


def _both_numbers(a, b):
    nums = (int, float)
    return isinstance(a, nums) and isinstance(b, nums) and not isinstance(a, bool) and not isinstance(b, bool)


class Checks:
    """Counts and prints checks for one client run."""

    def __init__(self, client):
        self.client = client
        self.passed = 0
        self.failed = 0
        self._lock = threading.Lock()

    def run(self, name, fn, *args):
        """Runs fn(*args) as the check `name`: ok when it returns, FAIL when it raises."""
        try:
            fn(*args)
        except Mismatch as e:
            self._fail(name, str(e))
        except Exception as e:  # one check's failure must not hide the others
            self._fail(name, f"unexpected {type(e).__name__}: {e}")
            if "LAKESQL_CLIENTS_DEBUG" in __import__("os").environ:
                traceback.print_exc()
        else:
            self._ok(name)

    def eq(self, name, want, got):
        """The check `name` passes when want == got (same type, or both numbers)."""
        self.run(name, expect_eq, want, got)

    def fail(self, name, message):
        """Counts and prints one FAIL without running anything."""
        self._fail(name, message)

    def _ok(self, name):
        with self._lock:
            self.passed += 1
            print(f"ok {name}", flush=True)

    def _fail(self, name, message):
        message = " ".join(message.split("\n"))
        with self._lock:
            self.failed += 1
            print(f"FAIL {name}: {message}", flush=True)

    def finish(self):
        """Prints the summary line and exits 0 only when nothing failed."""
        print(f"clients: {self.client} {self.passed} passed, {self.failed} failed", flush=True)
        sys.exit(0 if self.failed == 0 and self.passed > 0 else 1)
