package delta

// Domain metadata (PROTOCOL.md, "Domain Metadata"): domains are kept
// through checkpoints whether we understand them or not; a writer changes
// only the system-controlled (delta.*) domains it understands, and two
// overlapping transactions that write the same domain conflict.

import (
	"fmt"
	"strings"
)

// systemDomainPrefix starts the domains the protocol reserves.
const systemDomainPrefix = "delta."

// checkDomains refuses domain metadata actions a commit must not carry: a
// domain on a table without the domainMetadata feature, a system domain
// other than the ones Commit writes itself.
func checkDomains(p Protocol, actions []Action, ours map[string]bool) error {
	for _, a := range actions {
		d := a.DomainMetadata
		if d == nil {
			continue
		}
		if !p.HasWriterFeature(FeatureDomainMetadata) {
			return unsupported("domain metadata (domain %q) on a table without the domainMetadata feature", d.Domain)
		}
		if strings.HasPrefix(d.Domain, systemDomainPrefix) && !ours[d.Domain] {
			return fmt.Errorf("the system-controlled domain %q is not ours to change", d.Domain)
		}
	}
	return nil
}

// DomainConflict returns why the winners of a lost race conflict with
// ours, the actions that lost, on domain metadata: a winner wrote a domain
// ours writes too. It is "" when they do not. The row tracking high-water
// mark is not a conflict: Commit assigns row ids afresh on the retry's
// snapshot, above the winners' mark.
func (e *ConflictError) DomainConflict(ours []Action) string {
	mine := map[string]bool{}
	for _, a := range ours {
		if d := a.DomainMetadata; d != nil && d.Domain != RowTrackingDomain {
			mine[d.Domain] = true
		}
	}
	if len(mine) == 0 {
		return ""
	}
	for _, w := range e.Winners {
		for _, a := range w.Actions {
			if d := a.DomainMetadata; d != nil && mine[d.Domain] {
				return fmt.Sprintf("version %d changed the domain metadata %q, which this commit changes too", w.Version, d.Domain)
			}
		}
	}
	return ""
}
