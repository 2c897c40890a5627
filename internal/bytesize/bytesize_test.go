package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "128MB": 128 << 20, "2 GiB": 2 << 30, "10kb": 10 << 10, "1TB": 1 << 40, "512B": 512} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1MB", "lots", "1.5GB", "99999999999TB"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}
