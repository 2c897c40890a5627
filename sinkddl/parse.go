package sinkddl

import (
	"fmt"
	"unicode/utf8"

	"github.com/lakesql/lakesql/internal/sqlword"
)

// maxIdentifierLength is MySQL's limit on table and column names, in characters.
const maxIdentifierLength = 64

// IsLakesqlStatement reports whether sql starts, after blanks and comments,
// with CREATE SINK, ALTER SINK, DROP SINK, SHOW SINKS, SHOW SINK (STATUS,
// HISTORY), SHOW CREATE SINK, OPTIMIZE SINK or VACUUM SINK (OPTIMIZE
// TABLE and ALTER TABLE stay MySQL's).
// Those statements are lakesql's to parse, errors included, and everything
// else belongs to the MySQL parser. It only looks at the leading keywords,
// so it is cheap enough to run on every query.
func IsLakesqlStatement(sql string) bool {
	first, i := sqlword.Leading(sql, 0)
	second, i := sqlword.Leading(sql, i)
	switch {
	case sqlword.Is(first, "CREATE"), sqlword.Is(first, "ALTER"), sqlword.Is(first, "DROP"), sqlword.Is(first, "OPTIMIZE"), sqlword.Is(first, "VACUUM"):
		return sqlword.Is(second, "SINK")
	case sqlword.Is(first, "SHOW"):
		if sqlword.Is(second, "SINKS") || sqlword.Is(second, "SINK") {
			return true
		}
		third, _ := sqlword.Leading(sql, i)
		return sqlword.Is(second, "CREATE") && sqlword.Is(third, "SINK")
	}
	return false
}

// Parse parses one lakesql statement, optionally followed by a semicolon.
// Errors are a *SyntaxError or a *DefinitionError; Parse never panics.
func Parse(sql string) (Statement, error) {
	if i := invalidUTF8(sql); i >= 0 {
		return nil, &SyntaxError{Pos: i + 1, Near: fmt.Sprintf(`\x%02x`, sql[i]), Msg: "the statement is not valid UTF-8"}
	}
	p := &parser{src: sql, lex: lexer{src: sql}}
	p.advance()
	return p.statement()
}

// invalidUTF8 returns the offset of the first byte that is not valid UTF-8, or -1.
func invalidUTF8(s string) int {
	if utf8.ValidString(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}
