package delta

import (
	"fmt"
	"slices"
	"strings"
)

// FilesFit tells whether data files written for the table as written
// describes it can be committed to the table as s is: whether they read
// right under s's schema, as the files of older versions do. They fit when
// the partitioning is the same, every column of the files either is a
// column of s (by physical name, and id in id mode) of the same or a wider
// type, or was dropped, every column of s the files lack is nullable, and
// s has no CHECK constraint the files were not checked against. It returns
// why they do not fit, or nil. A writer whose files were staged before a
// concurrent schema change checks them with it before it commits.
func (s *Snapshot) FilesFit(written *Snapshot) error {
	if written.Metadata.SchemaString == s.Metadata.SchemaString &&
		slices.Equal(written.Metadata.PartitionColumns, s.Metadata.PartitionColumns) &&
		constraintsEqual(written.Metadata, s.Metadata) {
		return nil
	}
	if !slices.Equal(written.Metadata.PartitionColumns, s.Metadata.PartitionColumns) {
		return fmt.Errorf("the partition columns changed from %q to %q", written.Metadata.PartitionColumns, s.Metadata.PartitionColumns)
	}
	for k, v := range s.Metadata.Configuration {
		if strings.HasPrefix(k, "delta.constraints.") && written.Metadata.Configuration[k] != v {
			return fmt.Errorf("CHECK constraint %s was added since, and the files were not checked against it", strings.TrimPrefix(k, "delta.constraints."))
		}
	}
	from, err := written.Schema()
	if err != nil {
		return err
	}
	to, err := s.Schema()
	if err != nil {
		return err
	}
	fromMapped, toMapped := mappingMode(written.Metadata), mappingMode(s.Metadata)
	byID := toMapped == "id"
	parts := map[string]bool{}
	for _, c := range s.Metadata.PartitionColumns {
		parts[strings.ToLower(c)] = true
	}
	target := map[string]*StructField{}
	for _, f := range to.Fields {
		if !parts[strings.ToLower(f.Name)] {
			target[physicalName(f, toMapped != "")] = f
		}
	}
	matched := map[*StructField]bool{}
	for _, w := range from.Fields {
		if parts[strings.ToLower(w.Name)] {
			continue
		}
		t, ok := target[physicalName(w, fromMapped != "")]
		if ok && byID {
			wid, _ := fieldID(w)
			tid, _ := fieldID(t)
			ok = wid == tid
		}
		if !ok {
			if toMapped == "" {
				return fmt.Errorf("column %q of the files is no longer in the table", w.Name)
			}
			continue // dropped: its values stay in the files, unread
		}
		matched[t] = true
		if a, b := typeString(w.Type), typeString(t.Type); a != b && wideningRule(w.Type, t.Type) != "" {
			return fmt.Errorf("column %q is %s in the files, %s in the table", t.Name, a, b)
		}
		if w.Nullable && !t.Nullable {
			return fmt.Errorf("column %q became NOT NULL", t.Name)
		}
	}
	for _, f := range to.Fields {
		if !parts[strings.ToLower(f.Name)] && !matched[f] && !f.Nullable {
			return fmt.Errorf("NOT NULL column %q is not in the files", f.Name)
		}
	}
	return nil
}

// mappingMode is the table's column mapping mode, "" for none.
func mappingMode(m Metadata) string {
	switch mode := m.Configuration[propColumnMappingMode]; mode {
	case "name", "id":
		return mode
	}
	return ""
}

func constraintsEqual(a, b Metadata) bool {
	for _, m := range [][2]Metadata{{a, b}, {b, a}} {
		for k, v := range m[0].Configuration {
			if strings.HasPrefix(k, "delta.constraints.") && m[1].Configuration[k] != v {
				return false
			}
		}
	}
	return true
}
