package stagename

import (
	"strings"
	"testing"
	"time"
)

func TestStampReadsBackTheStageTime(t *testing.T) {
	at := time.Date(2026, 12, 1, 21, 30, 15, 123e6, time.UTC)
	tok := New(at)
	if len(tok) != tokenLen || !strings.HasPrefix(tok, prefix) {
		t.Fatalf("token %q: want %d characters starting %q", tok, tokenLen, prefix)
	}
	for _, p := range []string{
		tok,
		"part-" + tok + "-0d9e8f1a-1b2c-4d5e-8f90-a1b2c3d4e5f6.c000.snappy.parquet",
		"date=2024-01-01/part-" + tok + "-x.parquet",
		"s3://bucket/t/data/lakesql-" + tok + "/part-0.parquet",
	} {
		got, ok := Stamp(p)
		if !ok || !got.Equal(at) {
			t.Errorf("Stamp(%q) = %v, %v; want %v", p, got, ok, at)
		}
	}
}

func TestStampFindsNoneWhereThereIsNone(t *testing.T) {
	tok := New(time.Now())
	for _, p := range []string{
		"",
		"part-00000-0d9e8f1a-1b2c-4d5e-8f90-a1b2c3d4e5f6.c000.snappy.parquet", // Spark's
		"part-0123456789ab-0d9e8f1a-1b2c-4d5e-8f90-a1b2c3d4e5f6.parquet",      // lakesql before tokens carried times
		"data/lakesql-0d9e8f1a-1b2c-4d5e-8f90-a1b2c3d4e5f6/part-0.parquet",
		"x" + tok,        // glued to a name: not a token
		tok + "0",        // too long
		tok[:tokenLen-1], // too short
		"ls" + strings.Repeat("g", stampDigits+randomDigits),
	} {
		if got, ok := Stamp(p); ok {
			t.Errorf("Stamp(%q) = %v; want none", p, got)
		}
	}
}

func TestTokensDiffer(t *testing.T) {
	at := time.Now()
	if a, b := New(at), New(at); a == b {
		t.Fatalf("two tokens of one instant are equal: %q", a)
	}
}

func FuzzStamp(f *testing.F) {
	f.Add("part-" + New(time.Now()) + "-x.parquet")
	f.Add("ls")
	f.Fuzz(func(t *testing.T, p string) {
		if got, ok := Stamp(p); ok && got.Before(time.Unix(0, 0)) {
			t.Fatalf("Stamp(%q) = %v, before 1970", p, got)
		}
	})
}
