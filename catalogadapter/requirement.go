package catalogadapter

import "fmt"

// Requirement is a precondition of a commit, carried as data: something
// about the table that the staged files were computed from and that must
// still hold when the commit lands. A backend checks the kinds it knows on
// every commit attempt (a lost race is retried only while they hold) and
// refuses any other kind with ErrUnsupported before it writes anything, so
// that no commit lands on a precondition nobody checked.
type Requirement struct {
	Kind RequirementKind
	// Version is the table version the requirement speaks of.
	Version int64
	// Value is what a kind that compares a value compares
	// (KindRowRulesAre: a fingerprint).
	Value string `json:",omitempty"`
}

// RequirementKind names what a Requirement asserts.
type RequirementKind string

// KindNoNewDataSince: no version after Version added data (NoNewDataSince).
const KindNoNewDataSince RequirementKind = "no-new-data-since"

// NoNewDataSince requires that no version after version added data: a
// copy-on-write merge read the table at version (the version Scanner.Files
// reported, -1 for an Iceberg table without a snapshot), and a data file
// added later may hold keys the merge did not see (on Iceberg a delete
// file may also hide rows of the files it rewrites, so those count too).
// Commits that add nothing, an epoch record alone say, do not break it.
func NoNewDataSince(version int64) Requirement {
	return Requirement{Kind: KindNoNewDataSince, Version: version}
}

// String renders the requirement for errors: no-new-data-since(3).
func (r Requirement) String() string {
	if r.Value != "" {
		return fmt.Sprintf("%s(%s)", r.Kind, r.Value)
	}
	return fmt.Sprintf("%s(%d)", r.Kind, r.Version)
}

// CheckKinds refuses, with an error wrapping ErrUnsupported, the first of
// reqs whose kind is not among known: what a backend calls before its
// first commit attempt.
func CheckKinds(reqs []Requirement, known ...RequirementKind) error {
next:
	for _, r := range reqs {
		for _, k := range known {
			if r.Kind == k {
				continue next
			}
		}
		return fmt.Errorf("%w: commit requirement %s", ErrUnsupported, r)
	}
	return nil
}
