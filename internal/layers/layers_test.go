package layers

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/lakesql/lakesql/"

// harnesses serve tests and benchmarks of several layers (`lakesql bench`
// runs internal/benchmark); they may import any layer, and only programs
// import them outside tests.
var harnesses = map[string]bool{"internal/benchmark": true, "internal/deltatest": true, "internal/icebergtest": true}

// rank is the layer of a package of the module, by its path; higher is
// nearer the user. The wiring layer, sinkdef, sits half a rank above the
// sink engine: the front ends reach both.
func rank(pkg string) float64 {
	switch {
	case strings.HasPrefix(pkg, "internal/"), pkg == "sinkddl":
		return 0 // leaves; sinkddl is one (TestSinkDDLIsALeaf), the statement language sinkdef reads
	case strings.HasPrefix(pkg, "tableformat/"):
		return 1
	case pkg == "catalogadapter" || strings.HasPrefix(pkg, "catalogadapter/"):
		return 2
	case pkg == "sqlsink":
		return 3
	case pkg == wiring:
		return 3.5
	case pkg == "planner" || pkg == "planner/wire" || pkg == "planner/wire/metrics" || pkg == "driver" || pkg == "sqllogictest":
		return 4 // the SQL front ends
	}
	return 5 // programs: cmd/..., examples/..., clients/...
}

// wiring is the package that opens sinks over the backends of their
// formats: the one package above the provider contract that may import
// every layer below its own.
const wiring = "sinkdef"

// debts are today's imports that skip a layer. Each goes when the re-cut
// gives the front ends one way down (issue 17: a home for the engine below
// planner).
var debts = map[string]bool{
	"cmd/lakesql -> tableformat/delta": true, // delta-info
	// The sqlsink example shows the engine's Go API over a Delta provider.
	"examples/arrowsink -> catalogadapter":           true,
	"examples/arrowsink -> catalogadapter/deltalake": true,
	"examples/arrowsink -> sqlsink":                  true,
}

// TestLayers: no package imports a layer above its own, and none skips a
// layer (leaves and the wiring aside) unless the import is a listed debt;
// a debt that is paid must leave the list.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "duckdb_arrow", "-f",
		"{{.ImportPath}}|{{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imps, _ := strings.Cut(line, "|")
		pkg = strings.TrimPrefix(pkg, module)
		for _, imp := range strings.Fields(imps) {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			edge := pkg + " -> " + imp
			from, to := rank(pkg), rank(imp)
			switch {
			case harnesses[imp] && from < 5:
				bad = append(bad, edge+": imports a test harness")
			case harnesses[pkg]:
			case to > from:
				bad = append(bad, edge+": imports a layer above its own")
			case to == 0 || from-to <= 1 || pkg == wiring:
			case debts[edge]:
				seen[edge] = true
			default:
				bad = append(bad, edge+": skips a layer")
			}
		}
	}
	for d := range debts {
		if !seen[d] {
			bad = append(bad, d+": a debt no longer there; remove it from the list")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestSinkDDLIsALeaf: the statement language builds without go-mysql-server,
// so its parser can be read, tested and fuzzed on its own.
func TestSinkDDLIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "duckdb_arrow", "-deps", module+"sinkddl").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/dolthub/") || strings.HasPrefix(dep, module) && dep != module+"sinkddl" && !strings.HasPrefix(dep, module+"internal/") {
			t.Errorf("sinkddl depends on %s", dep)
		}
	}
}
