package lakesql.clients;

import java.sql.SQLException;

/** Tally counts a client run's checks and prints one line per check and the summary line. */
final class Tally {
  /** Mismatch is a check's own failure; its message says what was expected and what came. */
  static final class Mismatch extends RuntimeException {
    Mismatch(String message) {
      super(message);
    }
  }

  /** Body is one check's work; it passes when it returns without throwing. */
  interface Body {
    void run() throws Exception;
  }

  private final String client;
  private int passed;
  private int failed;

  Tally(String client) {
    this.client = client;
  }

  void check(String name, Body body) {
    try {
      body.run();
      passed++;
      System.out.println("ok " + name);
    } catch (Mismatch m) {
      fail(name, m.getMessage());
    } catch (SQLException e) {
      fail(name, describe(e));
    } catch (Throwable e) {
      fail(name, "exception: " + e);
    }
  }

  void fail(String name, String message) {
    failed++;
    System.out.println("FAIL " + name + ": " + message);
  }

  /** summary prints the last line and returns the exit code. */
  int summary() {
    System.out.println("clients: " + client + " " + passed + " passed, " + failed + " failed");
    return failed == 0 ? 0 : 1;
  }

  static String describe(SQLException e) {
    String msg = String.valueOf(e.getMessage()).split("\n")[0];
    return "error " + e.getErrorCode() + "/" + e.getSQLState() + ": " + msg;
  }

  static void expect(String what, Object expected, Object got) {
    String e = show(expected);
    String g = show(got);
    if (!e.equals(g)) {
      throw new Mismatch(what + "expected " + e + ", got " + g);
    }
  }

  /** show renders a value with its Java class, so that two renderings match only when the values do. */
  static String show(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof byte[] b) {
      StringBuilder sb = new StringBuilder("x'");
      for (byte x : b) {
        sb.append(String.format("%02x", x & 0xff));
      }
      return sb.append("'").toString();
    }
    if (v instanceof String s) {
      return quote(s);
    }
    return v.getClass().getSimpleName() + ":" + v;
  }

  static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"').toString();
  }
}
