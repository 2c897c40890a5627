package lakesql.clients;

import static lakesql.clients.Tally.expect;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Scenario runs the client matrix's scenario (clients/SCENARIO.md) for one JDBC driver, twice in
 * one JVM: with client-side prepared statements (the text protocol) and with
 * useServerPrepStmts=true (the binary protocol), each pass on sinks of its own.
 */
public final class Scenario {
  static final String[] COLUMNS = {
    "id", "b", "i8", "u8", "i16", "i32", "u32", "i64", "f32", "f64", "dec", "vc", "tx", "js", "vb",
    "d", "dt", "ts"
  };
  static final String COLS_SQL = "`" + String.join("`, `", COLUMNS) + "`";
  static final String PLACEHOLDERS = "?" + ", ?".repeat(COLUMNS.length - 1);
  static final String TYPES_DDL =
      "id BIGINT NOT NULL, b BOOLEAN, i8 TINYINT, u8 TINYINT UNSIGNED, i16 SMALLINT, i32 INT,"
          + " u32 INT UNSIGNED, i64 BIGINT, f32 FLOAT, f64 DOUBLE, `dec` DECIMAL(20,6), vc VARCHAR(64),"
          + " tx TEXT, js JSON, vb VARBINARY(64), d DATE, dt DATETIME(6), ts TIMESTAMP(6),"
          + " PRIMARY KEY (id)";
  static final String[] DECLARED = {
    "bigint", "tinyint(1)", "tinyint", "tinyint unsigned", "smallint", "int", "int unsigned",
    "bigint", "float", "double", "decimal(20,6)", "varchar(64)", "text", "json", "varbinary(64)",
    "date", "datetime(6)", "timestamp(6)"
  };
  static final String[] DATETIMES = {
    "2024-06-15 10:20:30.000001", "2024-06-15 10:20:30.050000", "2024-06-15 10:20:30.500000",
    "2024-06-15 10:20:30.123456", "0001-01-01 00:00:00.000000", "9999-12-31 23:59:59.999999",
    "1969-01-01 00:00:00.000000", "2040-01-01 00:00:00.000000"
  };
  static final String[] STRINGS = {"it's", "a\"b", "back\\slash", "emoji \uD83D\uDE00", "nul\0inside"};
  static final String JSON_TEXT = "{\"a\": [1, 2, {\"b\": null}]}";
  static final DateTimeFormatter DT = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS");

  final String client;
  final String baseUrl;
  final String user;
  final String password;
  final Tally t;

  Scenario(String client, String baseUrl, String user, String password, Tally t) {
    this.client = client;
    this.baseUrl = baseUrl;
    this.user = user;
    this.password = password;
    this.t = t;
  }

  public static void main(String[] args) throws Exception {
    String client = args.length > 0 ? args[0] : "";
    String host = env("LAKESQL_HOST", "127.0.0.1");
    String port = env("LAKESQL_PORT", "3306");
    String db = env("LAKESQL_DATABASE", "lakesql");
    String base;
    String options;
    switch (client) {
      case "mariadb-connector-j" -> {
        base = "jdbc:mariadb://" + host + ":" + port + "/" + db;
        // useBulkStmts is the driver's own bulk path (COM_STMT_BULK_EXECUTE where the
        // server offers it, else pipelined statements).
        options = "useBulkStmts=true";
      }
      case "mysql-connector-j" -> {
        base = "jdbc:mysql://" + host + ":" + port + "/" + db;
        // rewriteBatchedStatements is Connector/J's bulk path (multi-row INSERTs);
        // tinyInt1isBit (the default) makes a TINYINT(1) a Boolean.
        options = "sslMode=DISABLED&allowPublicKeyRetrieval=true&rewriteBatchedStatements=true"
            + "&connectionTimeZone=UTC&forceConnectionTimeZoneToSession=false";
      }
      default -> {
        System.err.println("usage: Scenario mariadb-connector-j|mysql-connector-j");
        System.exit(2);
        return;
      }
    }
    Tally t = new Tally(client);
    System.out.println("# " + client + " options: " + options + ", then each pass's useServerPrepStmts");
    Scenario s =
        new Scenario(client, base + "?" + options, env("LAKESQL_USER", "root"),
            env("LAKESQL_PASSWORD", ""), t);
    s.pass(false);
    s.pass(true);
    System.exit(t.summary());
  }

  static String env(String name, String dflt) {
    String v = System.getenv(name);
    return v == null || v.isEmpty() ? dflt : v;
  }

  /** Pass holds one run of the scenario: one protocol, one set of sinks. */
  final class Pass {
    final boolean sps;
    final String p;
    final String sfx;
    Connection conn;

    Pass(boolean sps) {
      this.sps = sps;
      this.p = sps ? "server-prep " : "client-prep ";
      this.sfx = sps ? "_sp" : "";
    }

    Connection connect(String pw) throws SQLException {
      return DriverManager.getConnection(baseUrl + "&useServerPrepStmts=" + sps, user, pw);
    }

    String sink(String name) {
      return name + sfx;
    }

    long version(String name) throws SQLException {
      return status(name, "Table_version", -1);
    }

    /** The sink's Last_epoch, 0 before its first commit. */
    long lastEpoch(String name) throws SQLException {
      return status(name, "Last_epoch", 0);
    }

    /** A column of the sink's status row, ifNull when it is NULL. */
    long status(String name, String column, long ifNull) throws SQLException {
      ResultSet rs;
      if (sps) {
        PreparedStatement ps = conn.prepareStatement("CALL lakesql_sink_status(?)");
        ps.setString(1, sink(name));
        rs = ps.executeQuery();
      } else {
        rs = conn.createStatement().executeQuery("SHOW SINK STATUS " + sink(name));
      }
      if (!rs.next()) {
        throw new Tally.Mismatch("sink status of " + sink(name) + ": expected a row, got none");
      }
      long v = rs.getLong(column);
      return rs.wasNull() ? ifNull : v;
    }

    long count(String sql, Object... params) throws SQLException {
      PreparedStatement ps = conn.prepareStatement(sql);
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      ResultSet rs = ps.executeQuery();
      rs.next();
      return rs.getLong(1);
    }

    void stillWorks() throws SQLException {
      ResultSet rs = conn.prepareStatement("SELECT 2").executeQuery();
      rs.next();
      expect("SELECT 2 after the error: ", 2L, rs.getLong(1));
    }

    void run() {
      t.check(p + "connect", () -> {
        conn = connect(password);
        expect("autocommit on connect: ", true, conn.getAutoCommit());
      });
      t.check(p + "connect wrong password refused 1045/28000", () -> {
        try (Connection c = connect(password + "x")) {
          throw new Tally.Mismatch("expected error 1045/28000, got a connection");
        } catch (SQLException e) {
          expectError(e, 1045, "28000");
        }
      });
      if (conn == null) {
        return;
      }
      sinks();
      values();
      transactions();
      errors();
      metadata();
      bulk();
      concurrency();
      try {
        conn.close();
      } catch (SQLException e) {
        // the summary does not depend on a clean close
      }
    }

    // 2. Sinks: the text statement without server-side prepares, the CALL
    // procedure with ? arguments with them.
    void sinks() {
      Map<String, String> defs = new LinkedHashMap<>();
      defs.put("types", TYPES_DDL);
      defs.put("txn", "id BIGINT NOT NULL, v VARCHAR(32)");
      defs.put("bulk", "id BIGINT NOT NULL, v VARCHAR(32), x DOUBLE");
      defs.put("conc", "id BIGINT NOT NULL, conn INT");
      for (var e : defs.entrySet()) {
        String name = sink(e.getKey());
        // conc counts one version per commit: no auto-compaction among them.
        String opts = e.getKey().equals("types") ? "mode = 'upsert'"
            : e.getKey().equals("conc") ? "auto_compact = false" : null;
        if (sps) {
          t.check(p + "sink " + name + " (CALL lakesql_create_sink, prepared)", () -> {
            PreparedStatement ps = conn.prepareStatement("CALL lakesql_create_sink(?, ?, ?, ?, ?, ?)");
            ps.setString(1, name);
            ps.setString(2, "delta");
            ps.setString(3, "lake/" + name);
            ps.setString(4, e.getValue());
            ps.setNull(5, Types.VARCHAR);
            ps.setString(6, opts);
            ps.execute();
            version(e.getKey());
          });
        } else {
          t.check(p + "sink " + name + " (CREATE SINK)", () -> {
            conn.createStatement().execute("CREATE SINK " + name + " INTO DELTA 'lake/" + name + "' ("
                + e.getValue() + ")" + (opts == null ? "" : " WITH (" + opts + ")"));
            version(e.getKey());
          });
        }
      }
    }

    // 3. Values, written with natively typed parameters and read back with
    // getObject, compared exactly.
    void values() {
      List<Object[]> rows = typeRows();
      List<Object[]> written = new ArrayList<>();
      String types = sink("types");
      t.check(p + "values write", () -> {
        List<String> failures = new ArrayList<>();
        PreparedStatement ps =
            conn.prepareStatement("INSERT INTO " + types + " (" + COLS_SQL + ") VALUES (" + PLACEHOLDERS + ")");
        for (Object[] r : rows) {
          try {
            for (int i = 0; i < COLUMNS.length; i++) {
              bind(ps, i + 1, COLUMNS[i], r[i]);
            }
            ps.executeUpdate();
            written.add(r);
          } catch (SQLException e) {
            failures.add("id " + r[0] + ": " + Tally.describe(e));
          }
        }
        if (!failures.isEmpty()) {
          throw new Tally.Mismatch("expected every row inserted, got " + String.join("; ", failures));
        }
      });
      Map<Long, Object[]> read = new LinkedHashMap<>();
      t.check(p + "values read", () -> {
        PreparedStatement ps =
            conn.prepareStatement("SELECT " + COLS_SQL + " FROM " + types + " WHERE id < ? ORDER BY id");
        ps.setLong(1, 900);
        ResultSet rs = ps.executeQuery();
        while (rs.next()) {
          Object[] g = new Object[COLUMNS.length];
          for (int i = 0; i < COLUMNS.length; i++) {
            g[i] = get(rs, COLUMNS[i]);
          }
          read.put((Long) g[0], g);
        }
      });
      t.check(p + "values rows present", () -> {
        List<String> missing = new ArrayList<>();
        for (Object[] r : written) {
          if (!read.containsKey((Long) r[0])) {
            missing.add(String.valueOf(r[0]));
          }
        }
        if (written.isEmpty()) {
          throw new Tally.Mismatch("expected rows, got none written");
        }
        if (!missing.isEmpty()) {
          throw new Tally.Mismatch("expected the " + written.size() + " rows written, missing ids " + missing);
        }
      });
      for (int i = 1; i < COLUMNS.length; i++) {
        final int c = i;
        t.check(p + "values " + COLUMNS[c], () -> {
          List<String> bad = new ArrayList<>();
          for (Object[] r : written) {
            Object[] g = read.get((Long) r[0]);
            if (g == null) {
              continue;
            }
            String e = Tally.show(canonical(COLUMNS[c], r[c]));
            String v = Tally.show(canonical(COLUMNS[c], g[c]));
            if (!e.equals(v)) {
              bad.add("id " + r[0] + ": expected " + e + ", got " + v);
            }
          }
          if (written.isEmpty()) {
            bad.add("no row was written");
          }
          if (!bad.isEmpty()) {
            throw new Tally.Mismatch(bad.size() + " of " + written.size() + " rows differ: "
                + String.join("; ", bad.subList(0, Math.min(4, bad.size()))) + (bad.size() > 4 ? "; ..." : ""));
          }
        });
      }

      // Out-of-range values: 1264/22003, and nothing inserted.
      Object[][] refused = {
        {"BIGINT setBigDecimal(9223372036854775808)", "i64", new BigDecimal("9223372036854775808")},
        {"BIGINT setString('99999999999999999999')", "i64", "99999999999999999999"},
        {"BIGINT setBigDecimal(-9223372036854775809)", "i64", new BigDecimal("-9223372036854775809")},
        {"BIGINT setDouble(9.3e18)", "i64", 9.3e18},
        {"TINYINT UNSIGNED setInt(256)", "u8", 256},
        {"INT UNSIGNED setLong(-1)", "u32", -1L},
        // MySQL Connector/J cannot bind a uint64: it sends a BigInteger as a signed LONGLONG of
        // its longValue() (18446744073709551615 goes as -1, without the unsigned flag, to any
        // server), so for it the value travels as a DECIMAL instead.
        client.equals("mysql-connector-j")
            ? new Object[] {"BIGINT setObject(BigDecimal 18446744073709551615)", "i64",
                new BigDecimal("18446744073709551615")}
            : new Object[] {"BIGINT setObject(BigInteger 18446744073709551615)", "i64",
                new BigInteger("18446744073709551615")},
      };
      long rid = 900;
      for (Object[] x : refused) {
        long id = ++rid;
        t.check(p + "refused " + x[0] + " 1264/22003", () -> {
          PreparedStatement ps =
              conn.prepareStatement("INSERT INTO " + types + " (id, `" + x[1] + "`) VALUES (?, ?)");
          ps.setLong(1, id);
          ps.setObject(2, x[2]);
          try {
            ps.executeUpdate();
            throw new Tally.Mismatch("expected error 1264/22003, got success");
          } catch (SQLException e) {
            expectError(e, 1264, "22003");
          }
          expect("rows with id " + id + ": ", 0L, count("SELECT count(*) FROM " + types + " WHERE id = ?", id));
        });
      }
    }

    // 4. Transactions: setAutoCommit(false)/commit/rollback, checked by versions.
    void transactions() {
      String txn = sink("txn");
      t.check(p + "txn commit: +1 version, both rows", () -> {
        long v0 = version("txn");
        conn.setAutoCommit(false);
        insertTxn(1, "a");
        insertTxn(2, "b");
        conn.commit();
        conn.setAutoCommit(true);
        expect("version delta: ", 1L, version("txn") - v0);
        expect("rows 1,2: ", 2L, count("SELECT count(*) FROM " + txn + " WHERE id IN (1, 2)"));
      });
      t.check(p + "txn rollback: +0 version, no rows", () -> {
        long v0 = version("txn");
        conn.setAutoCommit(false);
        insertTxn(3, "c");
        insertTxn(4, "d");
        conn.rollback();
        conn.setAutoCommit(true);
        expect("version delta: ", 0L, version("txn") - v0);
        expect("rows 3,4: ", 0L, count("SELECT count(*) FROM " + txn + " WHERE id IN (3, 4)"));
      });
      t.check(p + "txn autocommit: +1 version, the row", () -> {
        conn.setAutoCommit(true);
        long v0 = version("txn");
        insertTxn(5, "e");
        expect("version delta: ", 1L, version("txn") - v0);
        expect("row 5: ", 1L, count("SELECT count(*) FROM " + txn + " WHERE id = 5"));
      });
    }

    void insertTxn(long id, String v) throws SQLException {
      PreparedStatement ps = conn.prepareStatement("INSERT INTO " + sink("txn") + " (id, v) VALUES (?, ?)");
      ps.setLong(1, id);
      ps.setString(2, v);
      ps.executeUpdate();
    }

    // 5. Errors: code and SQLSTATE; the connection keeps working.
    void errors() {
      try {
        conn.setAutoCommit(true);
      } catch (SQLException e) {
        // each check below reports what it meets
      }
      String types = sink("types");
      String txn = sink("txn");
      if (sps) {
        errorCheck("CALL lakesql_create_sink of an existing name", 1050, "42S01",
            "CALL lakesql_create_sink(?, ?, ?, ?)", txn, "delta", "lake/" + txn + "2", "id BIGINT NOT NULL");
      } else {
        t.check(p + "error CREATE SINK of an existing name 1050/42S01", () -> {
          try {
            conn.createStatement().execute("CREATE SINK " + txn + " INTO DELTA 'lake/" + txn + "2' (id BIGINT NOT NULL)");
            throw new Tally.Mismatch("expected error 1050/42S01, got success");
          } catch (SQLException e) {
            expectError(e, 1050, "42S01");
          }
          stillWorks();
        });
      }
      errorCheck("SELECT * FROM nosuch", 1146, "42S02", "SELECT * FROM nosuch");
      errorCheck("SELEC 1 prepared", 1064, "42000", "SELEC 1");
      t.check(p + "error SELEC 1 through Statement 1064/42000", () -> {
        try {
          conn.createStatement().execute("SELEC 1");
          throw new Tally.Mismatch("expected error 1064/42000, got success");
        } catch (SQLException e) {
          expectError(e, 1064, "42000");
        }
        stillWorks();
      });
      errorCheck("NULL into txn.id", 1048, "23000", "INSERT INTO " + txn + " (id, v) VALUES (?, ?)", null, "x");
      errorCheck("'x1.5' into types.dec", 1366, "HY000", "INSERT INTO " + types + " (id, `dec`) VALUES (?, ?)", 950L, "x1.5");
      errorCheck("65 characters into types.vc", 1406, "22001", "INSERT INTO " + types + " (id, vc) VALUES (?, ?)", 951L, "x".repeat(65));
      errorCheck("'{bad' into types.js", 3140, "22032", "INSERT INTO " + types + " (id, js) VALUES (?, ?)", 952L, "{bad");
    }

    void errorCheck(String what, int code, String state, String sql, Object... params) {
      t.check(p + "error " + what + " " + code + "/" + state, () -> {
        try {
          PreparedStatement ps = conn.prepareStatement(sql);
          for (int i = 0; i < params.length; i++) {
            if (params[i] == null) {
              ps.setNull(i + 1, Types.BIGINT);
            } else {
              ps.setObject(i + 1, params[i]);
            }
          }
          ps.execute();
          throw new Tally.Mismatch("expected error " + code + "/" + state + ", got success");
        } catch (SQLException e) {
          expectError(e, code, state);
        }
        stillWorks();
      });
    }

    // 6. Metadata: DatabaseMetaData.getColumns/getPrimaryKeys and the result set's own.
    void metadata() {
      String types = sink("types");
      Map<String, String> declared = new LinkedHashMap<>();
      Map<String, String> nullable = new LinkedHashMap<>();
      Map<String, String> raw = new LinkedHashMap<>();
      t.check(p + "metadata getColumns lists the 18 columns", () -> {
        DatabaseMetaData md = conn.getMetaData();
        ResultSet rs = md.getColumns(conn.getCatalog(), null, types, "%");
        List<String> names = new ArrayList<>();
        while (rs.next()) {
          String name = rs.getString("COLUMN_NAME");
          names.add(name);
          String typeName = rs.getString("TYPE_NAME");
          int dataType = rs.getInt("DATA_TYPE");
          int size = rs.getInt("COLUMN_SIZE");
          int digits = rs.getInt("DECIMAL_DIGITS");
          declared.put(name, declaredOf(typeName, dataType, size, digits));
          raw.put(name, "TYPE_NAME=" + typeName + " DATA_TYPE=" + dataType + " COLUMN_SIZE=" + size
              + " DECIMAL_DIGITS=" + digits);
          nullable.put(name, rs.getString("IS_NULLABLE"));
        }
        expect("columns: ", String.join(",", COLUMNS), String.join(",", names));
      });
      for (int i = 0; i < COLUMNS.length; i++) {
        String c = COLUMNS[i];
        String want = DECLARED[i];
        t.check(p + "metadata getColumns " + c + " " + want, () -> {
          if (!want.equals(declared.get(c))) {
            throw new Tally.Mismatch("expected " + want + ", got " + declared.get(c) + " (" + raw.get(c) + ")");
          }
        });
      }
      t.check(p + "metadata getColumns id IS_NULLABLE NO", () -> expect("", "NO", nullable.get("id")));
      t.check(p + "metadata getPrimaryKeys (id)", () -> {
        ResultSet rs = conn.getMetaData().getPrimaryKeys(conn.getCatalog(), null, types);
        List<String> keys = new ArrayList<>();
        while (rs.next()) {
          keys.add(rs.getString("COLUMN_NAME"));
        }
        expect("key columns: ", "id", String.join(",", keys));
      });
      Map<String, Integer> idx = new LinkedHashMap<>();
      ResultSetMetaData[] rsmd = new ResultSetMetaData[1];
      t.check(p + "metadata result columns", () -> {
        PreparedStatement ps = conn.prepareStatement("SELECT " + COLS_SQL + " FROM " + types + " WHERE id = ?");
        ps.setLong(1, 1);
        ResultSet rs = ps.executeQuery();
        rsmd[0] = rs.getMetaData();
        List<String> names = new ArrayList<>();
        for (int i = 1; i <= rsmd[0].getColumnCount(); i++) {
          names.add(rsmd[0].getColumnLabel(i));
          idx.put(rsmd[0].getColumnLabel(i), i);
        }
        expect("columns: ", String.join(",", COLUMNS), String.join(",", names));
      });
      t.check(p + "metadata result b is a BOOLEAN/BIT of 1 (getObject gives a Boolean)", () ->
          expect("b type/class: ", "bit-or-boolean java.lang.Boolean",
              bitOrBoolean(rsmd[0].getColumnType(idx.get("b"))) + " " + rsmd[0].getColumnClassName(idx.get("b"))));
      t.check(p + "metadata result id NOT NULL", () ->
          expect("id isNullable: ", ResultSetMetaData.columnNoNulls, rsmd[0].isNullable(idx.get("id"))));
      t.check(p + "metadata result u8, u32 unsigned", () ->
          expect("isSigned u8,u32: ", "false,false",
              rsmd[0].isSigned(idx.get("u8")) + "," + rsmd[0].isSigned(idx.get("u32"))));
      t.check(p + "metadata result dt, ts scale 6", () ->
          expect("decimals dt,ts: ", "6,6", decimals(rsmd[0], idx.get("dt")) + "," + decimals(rsmd[0], idx.get("ts"))));
    }

    // 7. Bulk: addBatch/executeBatch of 100,000 rows in one transaction.
    void bulk() {
      String bulk = sink("bulk");
      int n = 100_000;
      t.check(p + "bulk 100000 rows by executeBatch in one transaction: +1 version", () -> {
        long v0 = version("bulk");
        conn.setAutoCommit(false);
        try {
          PreparedStatement ps = conn.prepareStatement("INSERT INTO " + bulk + " (id, v, x) VALUES (?, ?, ?)");
          for (int i = 0; i < n; i++) {
            ps.setLong(1, i);
            ps.setString(2, "v" + i);
            ps.setDouble(3, i * 0.5);
            ps.addBatch();
            if ((i + 1) % 10_000 == 0) {
              ps.executeBatch();
            }
          }
          conn.commit();
        } catch (SQLException e) {
          conn.rollback();
          throw e;
        } finally {
          conn.setAutoCommit(true);
        }
        expect("version delta: ", 1L, version("bulk") - v0);
      });
      t.check(p + "bulk count(*) 100000", () -> expect("", (long) n, count("SELECT count(*) FROM " + bulk)));
      t.check(p + "bulk count(DISTINCT id) 100000", () ->
          expect("", (long) n, count("SELECT count(DISTINCT id) FROM " + bulk)));
    }

    // 8. Concurrency: 16 connections x 50 autocommit INSERTs.
    void concurrency() {
      String conc = sink("conc");
      long[] v0 = new long[2];
      t.check(p + "conc 16 connections x 50 autocommit INSERTs acknowledged", () -> {
        v0[0] = version("conc");
        v0[1] = lastEpoch("conc");
        ConcurrentLinkedQueue<String> errs = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int k = 0; k < 16; k++) {
          final int kk = k;
          Thread th = new Thread(() -> {
            try (Connection c = connect(password)) {
              PreparedStatement ps = c.prepareStatement("INSERT INTO " + conc + " (id, conn) VALUES (?, ?)");
              for (int i = 0; i < 50; i++) {
                try {
                  ps.setLong(1, kk * 50L + i);
                  ps.setInt(2, kk);
                  ps.executeUpdate();
                } catch (SQLException e) {
                  errs.add("conn " + kk + " insert " + i + ": " + Tally.describe(e));
                }
              }
            } catch (SQLException e) {
              errs.add("conn " + kk + ": " + Tally.describe(e));
            }
          });
          threads.add(th);
          th.start();
        }
        for (Thread th : threads) {
          th.join();
        }
        if (!errs.isEmpty()) {
          throw new Tally.Mismatch("expected 800 OKs, got " + errs.size() + " errors: "
              + String.join("; ", errs.stream().limit(3).toList()));
        }
      });
      t.check(p + "conc count(*) 800", () -> expect("", 800L, count("SELECT count(*) FROM " + conc)));
      t.check(p + "conc count(DISTINCT id) 800", () ->
          expect("", 800L, count("SELECT count(DISTINCT id) FROM " + conc)));
      // Group commit: COMMITs that meet land as one version of consecutive
      // epochs, so each INSERT is an epoch, not a version.
      t.check(p + "conc +800 epochs", () -> expect("epoch delta: ", 800L, lastEpoch("conc") - v0[1]));
      t.check(p + "conc +1..800 versions", () -> {
        long d = version("conc") - v0[0];
        if (d < 1 || d > 800) {
          throw new Tally.Mismatch("version delta: expected 1..800, got " + d);
        }
      });
    }
  }

  void pass(boolean sps) {
    new Pass(sps).run();
  }

  /**
   * expectError checks an error's code and SQLSTATE. Connector/J turns every server error of
   * SQLSTATE class 22 into a java.sql.DataTruncation whose SQLSTATE is always 22001 (against
   * MySQL too, whatever jdbcCompliantTruncation says), so there the code is checked exactly
   * and the state only for its class.
   */
  static void expectError(SQLException e, int code, String state) {
    if (e instanceof java.sql.DataTruncation && state.startsWith("22") && "22001".equals(e.getSQLState())
        && e.getErrorCode() == code) {
      return;
    }
    if (e.getErrorCode() != code || !state.equals(e.getSQLState())) {
      throw new Tally.Mismatch("expected error " + code + "/" + state + ", got " + Tally.describe(e)
          + (e instanceof java.sql.DataTruncation ? " (a DataTruncation)" : ""));
    }
  }

  /**
   * decimals is a result column's fraction digits as the server described them: MariaDB
   * Connector/J gives them as getScale, MySQL Connector/J (whose getScale is 0 for any
   * non-decimal type) in its own Field.
   */
  static int decimals(ResultSetMetaData md, int column) throws SQLException {
    if (md.isWrapperFor(com.mysql.cj.jdbc.result.ResultSetMetaData.class)) {
      return md.unwrap(com.mysql.cj.jdbc.result.ResultSetMetaData.class).getFields()[column - 1].getDecimals();
    }
    return md.getScale(column);
  }

  static String bitOrBoolean(int jdbcType) {
    return jdbcType == Types.BIT || jdbcType == Types.BOOLEAN ? "bit-or-boolean" : "java.sql.Types " + jdbcType;
  }

  /**
   * declaredOf spells a getColumns row the way MySQL 8's COLUMN_TYPE does: the drivers give the
   * name without its parameters (TYPE_NAME) and the parameters apart (COLUMN_SIZE,
   * DECIMAL_DIGITS); a BOOLEAN is a BIT or BOOLEAN of size 1 (tinyInt1isBit).
   *
   * <p>MariaDB Connector/J builds the row from information_schema.COLUMNS, and against MySQL 8
   * (whose values lakesql gives) it reports tinyint(1) as BOOLEAN with COLUMN_SIZE 3
   * (NUMERIC_PRECISION), and DATETIME(6) with DECIMAL_DIGITS 0 (NUMERIC_SCALE is NULL for
   * temporal types) and COLUMN_SIZE 26 (20 + DATETIME_PRECISION): so a BOOLEAN of any size is a
   * tinyint(1), and the fraction digits of a datetime come from COLUMN_SIZE when
   * DECIMAL_DIGITS has none (JDBC: the length of its text at full precision).
   */
  static String declaredOf(String typeName, int dataType, int size, int digits) {
    String name = typeName.toLowerCase();
    if (dataType == Types.BOOLEAN || (dataType == Types.BIT && size == 1)) {
      return "tinyint(1)";
    }
    return switch (name) {
      case "varchar", "varbinary", "char", "binary" -> name + "(" + size + ")";
      case "decimal" -> name + "(" + size + "," + digits + ")";
      // Both drivers can leave DECIMAL_DIGITS empty for these (so they do on MySQL 8):
      // the fraction digits are in COLUMN_SIZE, 19 + 1 + fsp.
      case "datetime", "timestamp" -> {
        int fsp = digits > 0 ? digits : Math.max(size - 20, 0);
        yield fsp > 0 ? name + "(" + fsp + ")" : name;
      }
      case "bit" -> "bit(" + size + ")";
      default -> name;
    };
  }

  static List<Object[]> typeRows() {
    Object[] full = {
      null, Boolean.TRUE, 127L, 255L, 32767L, 2147483647L, 4294967295L, Long.MAX_VALUE, 1.5f, 1e308,
      new BigDecimal("12345678901234.123456"), null, null, JSON_TEXT, new byte[] {0x00, (byte) 0xff, 0x27, 0x5c}
    };
    Object[] low = {
      null, Boolean.FALSE, -128L, 0L, -32768L, -2147483648L, 0L, Long.MIN_VALUE, -1.5f, -1e308,
      new BigDecimal("-12345678901234.123456"), null, null, "[]", new byte[0]
    };
    String fixed = "2024-01-02 03:04:05.000000";
    List<Object[]> rows = new ArrayList<>();
    // Each datetime goes into dt of one row and ts of another, next to ordinary values,
    // so that a refused value costs only its own row.
    for (int k = 0; k < 2 * DATETIMES.length; k++) {
      Object[] base = k % 2 == 0 ? full : low;
      Object[] r = new Object[COLUMNS.length];
      System.arraycopy(base, 0, r, 0, base.length);
      r[0] = (long) (k + 1);
      r[11] = STRINGS[k % STRINGS.length];
      r[12] = STRINGS[(k + 1) % STRINGS.length];
      String dt = k < DATETIMES.length ? DATETIMES[k] : fixed;
      String ts = k < DATETIMES.length ? fixed : DATETIMES[k - DATETIMES.length];
      r[15] = dt.startsWith("0001-") ? LocalDate.of(1, 1, 1)
          : dt.startsWith("9999-") ? LocalDate.of(9999, 12, 31) : LocalDate.of(2024, 6, 15);
      r[16] = LocalDateTime.parse(dt, DT);
      r[17] = LocalDateTime.parse(ts, DT);
      rows.add(r);
    }
    Object[] nulls = new Object[COLUMNS.length];
    nulls[0] = (long) (rows.size() + 1);
    rows.add(nulls);
    return rows;
  }

  static void bind(PreparedStatement ps, int i, String col, Object v) throws SQLException {
    if (v == null) {
      int type = switch (col) {
        case "b" -> Types.BOOLEAN;
        case "i8", "u8", "i16", "i32" -> Types.INTEGER;
        case "u32", "i64", "id" -> Types.BIGINT;
        case "f32" -> Types.REAL;
        case "f64" -> Types.DOUBLE;
        case "dec" -> Types.DECIMAL;
        case "vb" -> Types.VARBINARY;
        case "d" -> Types.DATE;
        case "dt", "ts" -> Types.TIMESTAMP;
        default -> Types.VARCHAR;
      };
      ps.setNull(i, type);
      return;
    }
    switch (col) {
      case "b" -> ps.setBoolean(i, (Boolean) v);
      case "i8", "u8", "i16", "i32" -> ps.setInt(i, ((Long) v).intValue());
      case "id", "u32", "i64" -> ps.setLong(i, (Long) v);
      case "f32" -> ps.setFloat(i, (Float) v);
      case "f64" -> ps.setDouble(i, (Double) v);
      case "dec" -> ps.setBigDecimal(i, (BigDecimal) v);
      case "vb" -> ps.setBytes(i, (byte[]) v);
      case "d", "dt", "ts" -> ps.setObject(i, v);
      default -> ps.setString(i, (String) v);
    }
  }

  static Object get(ResultSet rs, String col) throws SQLException {
    Object v = switch (col) {
      case "b" -> rs.getObject(col);
      case "id", "i8", "u8", "i16", "i32", "u32", "i64" -> rs.getObject(col, Long.class);
      case "f32" -> rs.getObject(col, Float.class);
      case "f64" -> rs.getObject(col, Double.class);
      case "dec" -> rs.getBigDecimal(col);
      case "vb" -> rs.getBytes(col);
      case "d" -> rs.getObject(col, LocalDate.class);
      case "dt", "ts" -> rs.getObject(col, LocalDateTime.class);
      default -> rs.getString(col);
    };
    return rs.wasNull() ? null : v;
  }

  // canonical makes a value comparable: JSON without the whitespace between tokens, a
  // datetime with all six fraction digits.
  static Object canonical(String col, Object v) {
    if (v == null) {
      return null;
    }
    if (col.equals("js") && v instanceof String s) {
      return "json:" + compactJson(s);
    }
    if (v instanceof LocalDateTime ldt) {
      return "LocalDateTime " + ldt.format(DT);
    }
    return v;
  }

  static String compactJson(String s) {
    StringBuilder sb = new StringBuilder();
    boolean inString = false;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (inString) {
        sb.append(c);
        if (c == '\\' && i + 1 < s.length()) {
          sb.append(s.charAt(++i));
        } else if (c == '"') {
          inString = false;
        }
      } else if (c == '"') {
        inString = true;
        sb.append(c);
      } else if (!Character.isWhitespace(c)) {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
