package secret

import "testing"

func TestMaskSQL(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                           "SELECT 1",
		"SELECT * FROM t WHERE name = 'bob'": "SELECT * FROM t WHERE name = 'bob'",
		"CREATE SINK s INTO DELTA 's3://b/t' (id INT) WITH (storage.access_key_id = 'AKIA', storage.secret_access_key = 'wJalr/K+EY', mode = 'append')": "CREATE SINK s INTO DELTA 's3://b/t' (id INT) WITH (storage.access_key_id = '****', storage.secret_access_key = '****', mode = 'append')",
		"WITH (storage.secret_access_key='abc')":                                                            "WITH (storage.secret_access_key='****')",
		"WITH (storage.secret_access_key = abc/def+g, x=1)":                                                 "WITH (storage.secret_access_key = ****, x=1)",
		"WITH (storage.session_token = \"it\"\"s\")":                                                        "WITH (storage.session_token = \"****\")",
		"WITH (catalog.`s3.secret-access-key` = 'x')":                                                       "WITH (catalog.`s3.secret-access-key` = '****')",
		"WITH (catalog.s3.secret-access-key = 'x')":                                                         "WITH (catalog.s3.secret-access-key = '****')",
		"WITH (catalog.token = 'unterminated":                                                               "WITH (catalog.token = '****'",
		"WITH (storage.endpoint = 'http://user:pw1@h:9000/x')":                                              "WITH (storage.endpoint = 'http://user:****@h:9000/x')",
		"WITH (catalog.uri = 'postgres://h/db?user=u&password=pw2&sslmode=x')":                              "WITH (catalog.uri = 'postgres://h/db?user=u&password=****&sslmode=x')",
		"WITH (catalog.uri = 'host=h password=pw3 dbname=d')":                                               "WITH (catalog.uri = 'host=h password=**** dbname=d')",
		"CALL lakesql_create_sink('s', 'delta', 's3://b/t', '', '', 'storage.secret_access_key = ''abc''')": "CALL lakesql_create_sink('s', 'delta', 's3://b/t', '', '', 'storage.secret_access_key = ''****''')",
		"CALL lakesql_create_sink('s', 'delta', 's3://b/t', '', '', 'storage.secret_access_key=abc')":       "CALL lakesql_create_sink('s', 'delta', 's3://b/t', '', '', 'storage.secret_access_key=****')",
		"SELECT SLEEP(5) /* storage.secret_access_key='abc' */":                                             "SELECT SLEEP(5) /* storage.secret_access_key='****' */",
		"SELECT SLEEP(5) -- password=abc\n, 1":                                                              "SELECT SLEEP(5) -- password=****\n, 1",
		"SELECT 1 # token: 'x'":                                                                             "SELECT 1 # token: 'x'",
		"SELECT 1 /* http://u:pw4@h */":                                                                     "SELECT 1 /* http://u:****@h */",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'pw5', 'v'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw6'":   "CREATE USER 'u'@'%' IDENTIFIED BY '****', 'v'@'%' IDENTIFIED WITH caching_sha2_password BY '****'",
		"ALTER USER u IDENTIFIED BY 'pw7'":                                                                  "ALTER USER u IDENTIFIED BY '****'",
		"SET PASSWORD = 'pw8'":                                                                              "SET PASSWORD = '****'",
		"SET @token := 'pw9'":                                                                               "SET @token := '****'",
		"SELECT password, name FROM users WHERE id = 1":                                                     "SELECT password, name FROM users WHERE id = 1",
		"key = /* x */ 'pw10'":                                                                              "key = /* x */ '****'",
		"SELECT `a``b`, 'x''y'":                                                                             "SELECT `a``b`, 'x''y'",
		"":                                                                                                  "",
	} {
		if got := MaskSQL(in); got != want {
			t.Errorf("MaskSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestMaskURI(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:9000":                   "http://127.0.0.1:9000",
		"http://user:pw@h:9000/p":                 "http://user:****@h:9000/p",
		"https://h/x?token=abc&region=eu":         "https://h/x?token=****&region=eu",
		"https://h/x?X-Amz-Signature=abc;sig=d":   "https://h/x?X-Amz-Signature=****;sig=****",
		"u:p@tcp(h:3306)/db":                      "u:****@tcp(h:3306)/db",
		"file:/data/cat.sqlite3?mode=rwc":         "file:/data/cat.sqlite3?mode=rwc",
		"postgres://u@h/db?password=&sslmode=off": "postgres://u@h/db?password=&sslmode=off",
	} {
		if got := MaskURI(in); got != want {
			t.Errorf("MaskURI(%q) = %q, want %q", in, got, want)
		}
	}
}
