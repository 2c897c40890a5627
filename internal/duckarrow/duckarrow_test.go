package duckarrow

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBuildWithoutTagNamesTheFix builds the module the way a user's first
// `go build` does, without the duckdb_arrow tag: it must fail only here,
// on the identifier that names the fix, never on duckdb-go's missing
// Arrow symbols somewhere else.
func TestBuildWithoutTagNamesTheFix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("go build without -tags duckdb_arrow succeeded; expected it to stop on the tag")
	}
	text := string(out)
	if !strings.Contains(text, "lakesql_needs_the_build_tag_duckdb_arrow") {
		t.Fatalf("the build error does not name the fix:\n%s", text)
	}
	errLine := regexp.MustCompile(`^\S+\.go:\d+:\d+: `)
	for _, line := range strings.Split(text, "\n") {
		if errLine.MatchString(line) && !strings.HasPrefix(line, "internal/duckarrow/notag.go:") {
			t.Errorf("a build error outside internal/duckarrow/notag.go: %s", line)
		}
	}
}
