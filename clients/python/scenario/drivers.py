"""PyMySQL, mysqlclient and mysql-connector-python as Clients (client.py)."""

import ctypes
import ctypes.util

from .client import DbapiClient


class PyMySQL(DbapiClient):
    """PyMySQL: text protocol only (it has no server-side prepared statements)."""

    def __init__(self, env):
        super().__init__(env)
        import pymysql
        self.m = pymysql

    def connect(self, autocommit=None, password=None, **kw):
        if autocommit is not None:
            kw["autocommit"] = autocommit
        e = self.env
        return self.m.connect(host=e.host, port=e.port, user=e.user, database=e.database,
                              password=e.password if password is None else password, **kw)

    def error(self, e, h):
        if isinstance(e, self.m.MySQLError) and len(e.args) == 2 and isinstance(e.args[0], int):
            return (e.args[0], e.sqlstate, e.args[1])
        return None

    def query_raw_text(self, h, sql, params):
        if self._raw is None:
            # Encoders only: no decoder turns the wire text into Python values.
            enc = {k: v for k, v in self.m.converters.conversions.items() if not isinstance(k, int)}
            self._raw = self.connect(autocommit=True, conv=enc)
        return self.query(self._raw, sql, params)

    def result_fields(self, h, sql):
        cur = h.cursor()
        try:
            cur.execute(sql)
            return [(f.name, f.flags, f.length, f.scale) for f in cur._result.fields]
        finally:
            cur.close()


class MySQLdb(DbapiClient):
    """mysqlclient (MySQLdb, on libmariadb): text protocol only."""

    def __init__(self, env):
        super().__init__(env)
        import MySQLdb
        import MySQLdb.cursors
        self.m = MySQLdb
        self.cursorclass = sqlstate_cursor(MySQLdb)

    def connect(self, autocommit=None, password=None, **kw):
        if autocommit is not None:
            kw["autocommit"] = autocommit
        e = self.env
        return self.m.connect(host=e.host, port=e.port, user=e.user, database=e.database,
                              password=e.password if password is None else password,
                              cursorclass=self.cursorclass, **kw)

    def error(self, e, h):
        return mysqldb_error(self.m, e)

    def wrong_password(self):
        code, state, msg = super().wrong_password()
        if code is not None and state is None:
            # mysqlclient has no SQLSTATE for a failed connect; ask its C library.
            state = libmariadb_connect_sqlstate(self.env, self.env.password + "-wrong")
        return (code, state, msg)

    def query_raw_text(self, h, sql, params):
        if self._raw is None:
            enc = {k: v for k, v in self.m.converters.conversions.items() if not isinstance(k, int)}
            self._raw = self.connect(autocommit=True, conv=enc)
        rows = self.query(self._raw, sql, params)
        return [tuple(v.decode("utf-8") if isinstance(v, bytes) else v for v in r) for r in rows]

    def result_fields(self, h, sql):
        cur = h.cursor()
        try:
            cur.execute(sql)
            return [(d[0], flags, d[3], d[5]) for d, flags in zip(cur.description, cur.description_flags)]
        finally:
            cur.close()


def sqlstate_cursor(MySQLdb):
    """A MySQLdb cursor that puts the connection's SQLSTATE on the errors it raises
    (mysqlclient's exceptions carry only the code and message)."""
    import MySQLdb.cursors

    class SQLStateCursor(MySQLdb.cursors.Cursor):
        def _query(self, q):
            try:
                return super()._query(q)
            except MySQLdb.MySQLError as e:
                try:
                    e.sqlstate = self._get_db().sqlstate()
                except Exception:
                    pass
                raise

    return SQLStateCursor


def mysqldb_error(MySQLdb, e):
    if isinstance(e, MySQLdb.MySQLError) and len(e.args) >= 2 and isinstance(e.args[0], int):
        return (e.args[0], getattr(e, "sqlstate", None), e.args[1])
    return None


def libmariadb_connect_sqlstate(env, password):
    """The SQLSTATE libmariadb (mysqlclient's C client) reports for a failed connect."""
    lib = ctypes.CDLL(ctypes.util.find_library("mariadb") or "libmariadb.so.3")
    lib.mysql_init.restype = ctypes.c_void_p
    lib.mysql_init.argtypes = [ctypes.c_void_p]
    lib.mysql_real_connect.restype = ctypes.c_void_p
    lib.mysql_real_connect.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_char_p, ctypes.c_uint, ctypes.c_char_p, ctypes.c_ulong]
    lib.mysql_sqlstate.restype = ctypes.c_char_p
    lib.mysql_sqlstate.argtypes = [ctypes.c_void_p]
    lib.mysql_close.argtypes = [ctypes.c_void_p]
    m = lib.mysql_init(None)
    try:
        if lib.mysql_real_connect(m, env.host.encode(), env.user.encode(), password.encode(),
                                  env.database.encode(), env.port, None, 0):
            return "connected"
        return lib.mysql_sqlstate(m).decode()
    finally:
        lib.mysql_close(m)


class MySQLConnector(DbapiClient):
    """mysql-connector-python: its plain cursor (text protocol) and cursor(prepared=True)
    (the binary protocol)."""

    protocols = ("text", "binary")
    prepares = True

    def __init__(self, env):
        super().__init__(env)
        import mysql.connector
        self.m = mysql.connector

    def connect(self, autocommit=None, password=None, **kw):
        if autocommit is not None:
            kw["autocommit"] = autocommit
        e = self.env
        return self.m.connect(host=e.host, port=e.port, user=e.user, database=e.database,
                              password=e.password if password is None else password, **kw)

    def set_autocommit(self, conn, on):
        conn.autocommit = on

    autocommit_api = "conn.autocommit = True"

    def cursor(self, h, binary):
        return h.cursor(prepared=True) if binary else h.cursor()

    def error(self, e, h):
        if isinstance(e, self.m.Error) and e.errno is not None and e.errno > 0:
            return (e.errno, e.sqlstate, e.msg)
        return None

    def query_raw_text(self, h, sql, params):
        if self._raw is None:
            self._raw = self.connect(autocommit=True)
        cur = self._raw.cursor(raw=True)
        try:
            cur.execute(sql, tuple(params))
            return [tuple(None if v is None else bytes(v).decode("utf-8") for v in r) for r in cur.fetchall()]
        finally:
            cur.close()

    def result_fields(self, h, sql):
        cur = h.cursor()
        try:
            cur.execute(sql)
            cur.fetchall()
            return [(d[0], d[7], None, None) for d in cur.description]
        finally:
            cur.close()
