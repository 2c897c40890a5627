// Package subtree tells whether a path lies in a folder by its
// components, never by a string prefix (/lake/t2 is not in /lake/t): the
// rule every confinement check shares (the files a Delta log or an
// Iceberg manifest names, sink locations).
package subtree

import (
	"path/filepath"
	"strings"
)

// Local reports whether the clean absolute local path p is root or below
// it.
func Local(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// URL reports whether the canonical URL u (scheme://host/path, cleaned,
// no trailing slash) is root or below it.
func URL(root, u string) bool { return u == root || strings.HasPrefix(u, root+"/") }

// AnyLocal reports whether p is one of roots or below one (Local).
func AnyLocal(roots []string, p string) bool {
	for _, r := range roots {
		if Local(r, p) {
			return true
		}
	}
	return false
}

// AnyURL reports whether u is one of roots or below one (URL).
func AnyURL(roots []string, u string) bool {
	for _, r := range roots {
		if URL(r, u) {
			return true
		}
	}
	return false
}
