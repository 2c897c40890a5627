package subtree

import "testing"

func TestLocal(t *testing.T) {
	for _, c := range []struct {
		root, p string
		want    bool
	}{
		{"/lake/t", "/lake/t", true},
		{"/lake/t", "/lake/t/x.parquet", true},
		{"/lake/t", "/lake/t2", false},
		{"/lake/t", "/lake", false},
		{"/lake/t", "/lake/..t/x", false},
		{"/", "/x", true},
	} {
		if got := Local(c.root, c.p); got != c.want {
			t.Errorf("Local(%q, %q) = %v, want %v", c.root, c.p, got, c.want)
		}
	}
}

func TestURL(t *testing.T) {
	for _, c := range []struct {
		root, u string
		want    bool
	}{
		{"s3://b/lake", "s3://b/lake", true},
		{"s3://b/lake", "s3://b/lake/t/x", true},
		{"s3://b/lake", "s3://b/lake2/x", false},
		{"s3://b", "s3://b/x", true},
		{"s3://b", "s3://bb/x", false},
	} {
		if got := URL(c.root, c.u); got != c.want {
			t.Errorf("URL(%q, %q) = %v, want %v", c.root, c.u, got, c.want)
		}
	}
}
