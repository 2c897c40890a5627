package iceberg

import (
	"errors"
	"sort"
	"strings"

	"github.com/lakesql/lakesql/internal/secret"
)

// Redacted stands in for a secret wherever properties or errors are shown.
const Redacted = "[REDACTED]"

// secretWords mark a property key whose value is a secret. Broad on
// purpose: masking an access key id costs nothing, leaking a password does.
var secretWords = []string{"secret", "password", "passwd", "token", "credential", "key"}

// IsSecretKey tells whether a catalog property holds a secret.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// RedactProperties returns a copy of props fit to print: secret values are
// replaced, and so are passwords and secret-looking parameters inside
// URIs and DSNs (secret.MaskURI).
func RedactProperties(props map[string]string) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		switch {
		case IsSecretKey(k) && v != "":
			out[k] = Redacted
		default:
			out[k] = secret.MaskURIWith(v, Redacted)
		}
	}
	return out
}

// secretValues lists the values RedactProperties hides, longest first, so
// that error texts can be scrubbed of them too.
func secretValues(props map[string]string) []string {
	var out []string
	for k, v := range props {
		if IsSecretKey(k) && len(v) >= 3 {
			out = append(out, v)
		}
		for _, s := range secret.Values(v) {
			if len(s) >= 3 {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// scrubbedError hides secrets from an error's text. It unwraps to the
// sentinel it was classified as, not to the original error, whose text
// still holds the secret.
type scrubbedError struct {
	msg  string
	kind error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.kind }

// scrub returns err with every secret removed from its text. An error that
// mentions no secret is returned as it is, chain intact.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, s := range secrets {
		clean = strings.ReplaceAll(clean, s, Redacted)
	}
	if clean == msg {
		return err
	}
	var kind error
	for _, k := range []error{ErrConflict, ErrNoTable, ErrTableExists, ErrUnsupported, ErrInvalid} {
		if errors.Is(err, k) {
			kind = k
			break
		}
	}
	return &scrubbedError{msg: clean, kind: kind}
}
