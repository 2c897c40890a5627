package planner

import "testing"

// An engine without accounts (the REPL, the driver) refuses the account
// statements instead of accepting what nothing would hold, and its
// session may do everything.
func TestAccountStatementsRefusedEmbedded(t *testing.T) {
	te := openTestEngine(t, t.TempDir())
	s := te.session()
	for _, q := range []string{
		"CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
		"ALTER USER u IDENTIFIED BY 'pw'",
		"DROP USER u",
		"RENAME USER u TO v",
		"CREATE ROLE r",
		"GRANT SELECT ON lakesql.* TO u",
		"REVOKE SELECT ON lakesql.* FROM u",
		"SET PASSWORD FOR u = 'x'",
	} {
		err := te.fails(s, q, "accounts and privileges exist in lakesql serve only")
		if e := MySQLError(err); e.Num != 1235 {
			t.Errorf("%s: %d (%s), want 1235", q, e.Num, e.Message)
		}
	}
	te.exec(s, "CREATE SINK a INTO DELTA 'a' (id BIGINT)")
	te.exec(s, "INSERT INTO a VALUES (1)")
	te.exec(s, "SET lakesql_epoch = 3")
	te.exec(s, "SET lakesql_epoch = -1")
	te.exec(s, "DROP SINK a")
}
