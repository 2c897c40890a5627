"""A real `lakesql serve` on a free loopback port, talked to with PyMySQL."""
import os
import re
import subprocess

import pymysql

from . import paths, procs

PASSWORD = "interop-pw"


class Server:
    """One `lakesql serve` process on DIR/data.

    extra is a list of further command-line arguments (`--storage k=v`,
    `--allowed-roots a,b`); env adds to the environment. The server's
    output goes to DIR/server.out and DIR/server.err.
    """

    def __init__(self, dir, extra=(), env=None):
        self.dir = dir
        self.data = os.path.join(dir, "data")
        self.extra = list(extra)
        self.env = dict(os.environ, **(env or {}))
        self.proc = None
        self.port = None
        self._conn = None

    def start(self, timeout=60):
        os.makedirs(self.dir, exist_ok=True)
        out = open(os.path.join(self.dir, "server.out"), "w")
        err = open(os.path.join(self.dir, "server.err"), "a")
        self.proc = subprocess.Popen(
            [paths.LAKESQL, "serve", "--listen", "127.0.0.1:0", "--data", self.data,
             "--root-password", PASSWORD] + self.extra,
            stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=self.env)
        # The serving line names the port the kernel picked.
        def port():
            m = re.search(r"^lakesql serving on 127\.0\.0\.1:(\d+)", procs.tail(out.name, None), re.M)
            return m and int(m.group(1))
        self.port = procs.wait_ready(self.proc, "lakesql serve", port, timeout, err.name)
        return self

    def stderr(self):
        """What the server wrote to its stderr so far."""
        return procs.tail(os.path.join(self.dir, "server.err"), None)

    def connect(self, database="lakesql", autocommit=True):
        """A new PyMySQL connection; the caller closes it."""
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password=PASSWORD,
                               database=database, autocommit=autocommit, local_infile=False)

    def conn(self):
        """The server's shared connection, opened on first use."""
        if self._conn is None:
            self._conn = self.connect()
        return self._conn

    def exec(self, sql, args=None):
        """Runs one statement on the shared connection; returns the affected row count."""
        with self.conn().cursor() as c:
            return c.execute(sql, args)

    def query(self, sql, args=None):
        """Runs one query; returns (column names, rows as tuples)."""
        with self.conn().cursor() as c:
            c.execute(sql, args)
            names = [d[0] for d in c.description or ()]
            return names, list(c.fetchall())

    def stop(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None
        procs.stop(self.proc, timeout=45)

    def __enter__(self):
        return self.start() if self.proc is None else self

    def __exit__(self, *exc):
        self.stop()


def error_code(exc):
    """The MySQL error code of a PyMySQL exception, or None."""
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None
