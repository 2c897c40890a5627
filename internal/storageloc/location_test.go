package storageloc

import (
	"strings"
	"testing"
)

func TestParseLocation(t *testing.T) {
	good := []struct {
		in        string
		want      Location
		canonical string
	}{
		{"s3://lake/t/orders", Location{"s3", "lake", "t/orders"}, "s3://lake/t/orders"},
		{"S3://lake/t/orders", Location{"s3", "lake", "t/orders"}, "s3://lake/t/orders"},
		{"s3://lake//t///orders/", Location{"s3", "lake", "t/orders"}, "s3://lake/t/orders"},
		{"s3://lake", Location{"s3", "lake", ""}, "s3://lake"},
		{"s3://lake/", Location{"s3", "lake", ""}, "s3://lake"},
		{"gs://bucket/a/b", Location{"gs", "bucket", "a/b"}, "gs://bucket/a/b"},
		{"azblob://container/x", Location{"azblob", "container", "x"}, "azblob://container/x"},
		{"s3://lake/a.b/..c/d..", Location{"s3", "lake", "a.b/..c/d.."}, "s3://lake/a.b/..c/d.."},
	}
	for _, c := range good {
		got, err := ParseLocation(c.in)
		if err != nil {
			t.Errorf("ParseLocation(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseLocation(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if got.String() != c.canonical {
			t.Errorf("ParseLocation(%q).String() = %q, want %q", c.in, got.String(), c.canonical)
		}
		// The canonical form parses to itself.
		again, err := ParseLocation(got.String())
		if err != nil || again != got {
			t.Errorf("canonical %q parses to %+v, %v", got.String(), again, err)
		}
		if !IsLocation(c.in) {
			t.Errorf("IsLocation(%q) = false", c.in)
		}
	}

	bad := []struct{ in, why string }{
		{"/tmp/orders", "scheme"},
		{"orders", "scheme"},
		{"file:///tmp/orders", "scheme"},
		{"http://lake/orders", "scheme"},
		{"s3:/lake/orders", "scheme"},
		{"s3://", "no bucket"},
		{"s3:///orders", "no bucket"},
		{"s3://lake/a/../b", `".."`},
		{"s3://lake/./a", `"."`},
		{"s3://lake/a/..", `".."`},
		{"s3://lake/a?versionId=3", "query"},
		{"s3://lake/a#frag", "fragment"},
		{"s3://AKIDEXAMPLE@lake/a", "credentials"},
	}
	for _, c := range bad {
		_, err := ParseLocation(c.in)
		if err == nil {
			t.Errorf("ParseLocation(%q) succeeded, want an error about %s", c.in, c.why)
			continue
		}
		if !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseLocation(%q) = %v, want it to mention %s", c.in, err, c.why)
		}
	}
	for _, in := range []string{"/tmp/x", "x://y", "s3:/lake", "", "file:///x"} {
		if IsLocation(in) {
			t.Errorf("IsLocation(%q) = true", in)
		}
	}
}

// TestParseLocationHidesSecrets: a location with credentials in it is
// refused, and the refusal does not repeat the secret (errors end up in
// logs and in SHOW SINK STATUS).
func TestParseLocationHidesSecrets(t *testing.T) {
	const secret = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
	for _, in := range []string{
		"s3://AKIDEXAMPLE:" + secret + "@lake/orders",
		"gs://user:" + secret + "@bucket/t",
		// Bad enough that url.Parse itself fails (whose message quotes
		// the whole URL).
		"s3://AKIDEXAMPLE:" + secret + "%zz@lake/orders",
		"s3://AKIDEXAMPLE:" + secret + "@lake/orders?x=%zz",
	} {
		_, err := ParseLocation(in)
		if err == nil {
			t.Errorf("ParseLocation(%q) succeeded", in)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("ParseLocation error shows the secret: %v", err)
		}
	}
}
