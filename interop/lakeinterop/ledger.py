"""The suite's verdicts: every check of a table by an engine, and the summary."""
import collections
import traceback

from . import compare


# The engines the summary's E counts; other checkers (the log itself, go test)
# add checks but are not engines.
ENGINES = ("lakesql", "spark", "delta-rs", "pyiceberg")


class Ledger:
    """Records each (section, table, engine) check as right, wrong or refused.

    refused means lakesql declined a table with the unsupported-feature error
    naming the feature; it is counted apart and listed by name. A check that
    raised is wrong, with its traceback's last line as the detail.
    """

    def __init__(self, out):
        self.out = out
        self.entries = []  # (section, table, engine, verdict, detail)
        self.section = "?"

    def _add(self, table, engine, verdict, detail=""):
        self.entries.append((self.section, table, engine, verdict, detail))
        line = "%-5s %s: %s by %s" % (verdict, self.section, table, engine)
        if detail:
            line += ": " + detail
        self.out(line)

    def right(self, table, engine, detail=""):
        self._add(table, engine, "right", detail)

    def wrong(self, table, engine, detail):
        self._add(table, engine, "WRONG", detail)

    def refused(self, table, engine, feature):
        """lakesql (the engine) refused TABLE naming FEATURE."""
        self._add(table, engine, "refused", feature)

    def rows(self, table, engine, expected, got, types=None, what="rows"):
        """Compares row multisets; records right or wrong. True when right."""
        d = compare.diff_rows(expected, got, types)
        if d is None:
            self.right(table, engine, "%d %s" % (len(expected), what))
            return True
        self.wrong(table, engine, what + ": " + d)
        return False

    def check(self, table, engine, ok, detail):
        """Records a yes/no check: right when ok, else wrong with detail."""
        if ok:
            self.right(table, engine, detail)
        else:
            self.wrong(table, engine, detail)
        return ok

    def guard(self, table, engine):
        """A context manager that records an exception in its body as wrong."""
        return _Guard(self, table, engine)

    def counts(self, section=None):
        c = collections.Counter()
        for s, _, _, v, _ in self.entries:
            if section is None or s == section:
                c[v] += 1
        return c

    def failed(self):
        return self.counts()["WRONG"] > 0

    def summary(self):
        """The lines the run ends with: one per section, then the total."""
        lines = []
        sections = []
        for s, *_ in self.entries:
            if s not in sections:
                sections.append(s)
        for s in sections:
            c = self.counts(s)
            feats = sorted({d for (ss, _, _, v, d) in self.entries if ss == s and v == "refused"})
            line = "interop: %s: %d right, %d wrong, %d refused" % (s, c["right"], c["WRONG"], c["refused"])
            if feats:
                line += " (" + "; ".join(feats) + ")"
            lines.append(line)
        tables = {(s, t) for s, t, *_ in self.entries}
        engines = {e for _, _, e, *_ in self.entries if e in ENGINES}
        c = self.counts()
        lines.append("interop: %d tables × %d engines: %d read right, %d wrong, %d refused (named)"
                     % (len(tables), len(engines), c["right"], c["WRONG"], c["refused"]))
        return lines


class _Guard:
    def __init__(self, ledger, table, engine):
        self.ledger, self.table, self.engine = ledger, table, engine

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        if exc is None:
            return False
        if isinstance(exc, KeyboardInterrupt):
            return False
        last = traceback.format_exception_only(typ, exc)[-1].strip()
        self.ledger.wrong(self.table, self.engine, "raised " + last[:800])
        self.ledger.out("".join(traceback.format_exception(typ, exc, tb))[-3000:])
        return True
