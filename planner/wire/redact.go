package wire

import (
	"strings"
	"sync"

	"github.com/sirupsen/logrus"
)

// go-mysql-server logs the text of a statement it could not prepare, at
// error level, on logrus's standard logger: a CREATE SINK or CALL
// lakesql_create_sink carrying a storage secret would print it on the
// server's stderr. redactHook replaces the string literals of every query
// logged there by '***' before the line is written (hooks run before
// formatting); the statement's shape stays readable.
type redactHook struct{}

var installRedaction sync.Once

// redactStandardLogger installs redactHook on logrus's standard logger,
// once per process.
func redactStandardLogger() {
	installRedaction.Do(func() { logrus.StandardLogger().AddHook(redactHook{}) })
}

func (redactHook) Levels() []logrus.Level { return logrus.AllLevels }

func (redactHook) Fire(e *logrus.Entry) error {
	if q, ok := e.Data["query"].(string); ok {
		e.Data["query"] = redactLiterals(q)
	}
	return nil
}

// redactLiterals replaces each quoted string of a SQL text ('...', "..."
// with doubled or backslash-escaped quotes inside) by '***'. Identifiers
// in backquotes stay. An unterminated literal is redacted to the end.
func redactLiterals(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c == '`' { // an identifier: copied through its closing backquote
			j := i + 1
			for j < len(q) && q[j] != '`' {
				j++
			}
			j = min(j+1, len(q))
			b.WriteString(q[i:j])
			i = j - 1
			continue
		}
		if c != '\'' && c != '"' {
			b.WriteByte(c)
			continue
		}
		b.WriteString("'***'")
		for i++; i < len(q); i++ {
			if q[i] == '\\' {
				i++
				continue
			}
			if q[i] == c {
				if i+1 < len(q) && q[i+1] == c {
					i++
					continue
				}
				break
			}
		}
	}
	return b.String()
}
