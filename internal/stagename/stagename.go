// Package stagename names staged data files so that the time they were
// staged can be read back from their path alone. Vacuum needs it: a file
// no version names is either a crash's leftover or a stage in flight that
// may still commit, and only its age tells them apart
// (catalogadapter.StageLifetime). Object stores report a modification
// time too, but an upload's, and not every store the same way; the name
// is the same everywhere and written by the stager itself.
package stagename

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"
)

// prefix opens a token; hex digits never contain it, so it cannot be
// mistaken inside a UUID or another token.
const prefix = "ls"

const (
	stampDigits  = 11 // milliseconds since 1970 in hex: enough until the year 2527
	randomDigits = 8
	tokenLen     = len(prefix) + stampDigits + randomDigits
)

// New returns a token for a stage started at now: "ls", the time in
// milliseconds as 11 hex digits, and 8 random hex digits. It is made of
// lower-case letters and digits only, so it is safe in any file name.
func New(now time.Time) string {
	ms := now.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	var rnd [randomDigits / 2]byte
	_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails
	s := strconv.FormatInt(ms, 16)
	for len(s) < stampDigits {
		s = "0" + s
	}
	return prefix + s + hex.EncodeToString(rnd[:])
}

// Stamp returns the stage time of the first token in path, which may be a
// file name or a path of several segments; ok is false when path holds
// none (a file staged before tokens carried times, or another engine's).
func Stamp(path string) (t time.Time, ok bool) {
	for i := 0; i+tokenLen <= len(path); i++ {
		if path[i:i+len(prefix)] != prefix || (i > 0 && isAlnum(path[i-1])) {
			continue
		}
		end := i + tokenLen
		if end < len(path) && isAlnum(path[end]) {
			continue
		}
		digits := path[i+len(prefix) : end]
		if !allHex(digits) {
			continue
		}
		ms, err := strconv.ParseInt(digits[:stampDigits], 16, 64)
		if err != nil {
			continue
		}
		return time.UnixMilli(ms).UTC(), true
	}
	return time.Time{}, false
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
