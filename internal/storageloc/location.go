// Package storageloc parses object storage locations (s3://, gs://,
// azblob://) and names the WITH storage.* options that go with them. It is
// a leaf: the front ends (cmd, driver, sqllogictest, planner) check a
// location and its option names without importing the storage clients.
package storageloc

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Schemes are the URL schemes of object storage locations.
var Schemes = []string{"s3", "gs", "azblob"}

// IsLocation tells whether loc names object storage (scheme://...).
func IsLocation(loc string) bool {
	scheme, _, ok := strings.Cut(loc, "://")
	if !ok {
		return false
	}
	for _, s := range Schemes {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// Location is a parsed object storage location.
type Location struct {
	Scheme string // s3, gs or azblob
	Bucket string
	Prefix string // without leading or trailing slash; "" is the bucket root
}

// ParseLocation parses scheme://bucket/prefix. Prefixes are cleaned of
// empty segments; "." and ".." segments are refused, as are queries and
// fragments (options go into WITH, not into the URL).
func ParseLocation(loc string) (Location, error) {
	// Errors show the location without the user info a careless URL may
	// carry (s3://KEY:SECRET@bucket/...): it is refused, never repeated.
	shown := redactUserinfo(loc)
	u, err := url.Parse(loc)
	if err != nil {
		// url.Error quotes the whole URL: keep only its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Location{}, fmt.Errorf("object storage location %q: %w", shown, err)
	}
	l := Location{Scheme: strings.ToLower(u.Scheme), Bucket: u.Host}
	if !IsLocation(loc) {
		return Location{}, fmt.Errorf("object storage location %q: scheme must be one of %s", shown, strings.Join(Schemes, ", "))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return Location{}, fmt.Errorf("object storage location %q: no credentials, query or fragment allowed in the URL (use WITH storage.* options)", shown)
	}
	if l.Bucket == "" {
		return Location{}, fmt.Errorf("object storage location %q: no bucket", shown)
	}
	var segs []string
	for _, s := range strings.Split(u.Path, "/") {
		switch s {
		case "":
			continue
		case ".", "..":
			return Location{}, fmt.Errorf("object storage location %q: %q segments are not allowed", shown, s)
		}
		segs = append(segs, s)
	}
	l.Prefix = strings.Join(segs, "/")
	return l, nil
}

// redactUserinfo replaces the user info of scheme://userinfo@host/... by
// Mask; other strings are returned as they are.
func redactUserinfo(loc string) string {
	scheme, rest, ok := strings.Cut(loc, "://")
	if !ok {
		return loc
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return loc
	}
	return scheme + "://" + Mask + rest[at:]
}

// String is the canonical form, scheme://bucket/prefix.
func (l Location) String() string {
	if l.Prefix == "" {
		return l.Scheme + "://" + l.Bucket
	}
	return l.Scheme + "://" + l.Bucket + "/" + l.Prefix
}
