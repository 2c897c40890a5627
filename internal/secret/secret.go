// Package secret masks secrets in text that lakesql shows: statements in
// the process list and the REPL's history, URIs and DSNs in sink
// definitions. It knows no grammar: it masks by the shape of what it sees
// (a secret-looking name and its value, a password in a URI), and leans
// to masking too much, since showing a masked value costs little and
// showing a secret cannot be undone.
package secret

import (
	"regexp"
	"strings"
)

// Mask stands in for a masked value; it is the mask SHOW CREATE SINK
// shows for storage secrets.
const Mask = "****"

// secretWords mark a name whose value is a secret when the name contains
// one of them; exactNames do when the name is one of them (as words they
// are too short to look for inside names).
var (
	secretWords = []string{"secret", "password", "passwd", "token", "credential", "key", "private", "signature"}
	exactNames  = []string{"pwd", "sig", "auth"}
)

// IsSecretName reports whether a name (an option key, a URI query
// parameter, a DSN field) names a secret.
func IsSecretName(name string) bool {
	n := strings.ToLower(strings.Trim(name, "`'\" "))
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, w := range exactNames {
		if n == w {
			return true
		}
	}
	return false
}

// userinfo matches user:password@ in a URI or a DSN (http://u:p@h,
// postgres://u:p@h/db, u:p@tcp(h)/db); group 2 is the password.
var userinfo = regexp.MustCompile(`((?:^|://)[^:/@\s]*[^:/@\s]):([^@\s/][^@\s]*)@`)

// queryParam matches name=value in a URI query or a key=value DSN
// (?password=x&user=u, host=h password=x); group 2 is the name. A value
// stops at a quote: a quoted value is MaskSQL's to mask whole.
var queryParam = regexp.MustCompile("(^|[?&;\\s])([A-Za-z0-9_.\\-]+)=([^&;\\s#'\"`]*)")

// MaskURI masks the password of a URI's or a DSN's user:password@ and
// the values of its secret-looking parameters (password=, token=,
// key=, ...) with Mask. Anything else is left as it is.
func MaskURI(s string) string { return MaskURIWith(s, Mask) }

// MaskURIWith is MaskURI with another mask, for the places that show
// secrets masked their own way.
func MaskURIWith(s, mask string) string {
	if !strings.ContainsAny(s, "@=") {
		return s
	}
	s = userinfo.ReplaceAllString(s, "${1}:"+mask+"@")
	return queryParam.ReplaceAllStringFunc(s, func(m string) string {
		g := queryParam.FindStringSubmatch(m)
		if !IsSecretName(g[2]) || g[3] == "" || g[3] == mask {
			return m
		}
		return g[1] + g[2] + "=" + mask
	})
}

// Values returns the secrets MaskURI would hide in s, for scrubbing them
// from error texts that quote them another way.
func Values(s string) []string {
	var out []string
	for _, m := range userinfo.FindAllStringSubmatch(s, -1) {
		out = append(out, m[2])
	}
	for _, m := range queryParam.FindAllStringSubmatch(s, -1) {
		if IsSecretName(m[2]) && m[3] != "" {
			out = append(out, m[3])
		}
	}
	return out
}
