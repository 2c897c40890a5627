package delta

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Action is one line of a Delta commit file: exactly one field is set.
// Field names follow the Delta PROTOCOL.md; unknown actions are ignored on read.
type Action struct {
	Add                *Add                `json:"add,omitempty"`
	Remove             *Remove             `json:"remove,omitempty"`
	MetaData           *Metadata           `json:"metaData,omitempty"`
	Protocol           *Protocol           `json:"protocol,omitempty"`
	Txn                *Txn                `json:"txn,omitempty"`
	CommitInfo         map[string]any      `json:"commitInfo,omitempty"`
	CDC                *CDC                `json:"cdc,omitempty"`
	DomainMetadata     *DomainMetadata     `json:"domainMetadata,omitempty"`
	CheckpointMetadata *CheckpointMetadata `json:"checkpointMetadata,omitempty"`
	Sidecar            *Sidecar            `json:"sidecar,omitempty"`
}

// Add makes a data file part of the table.
type Add struct {
	// Path is a URI relative to the table root (percent-encoded), or absolute.
	Path             string             `json:"path"`
	PartitionValues  map[string]*string `json:"partitionValues"`
	Size             int64              `json:"size"`
	ModificationTime int64              `json:"modificationTime"`
	DataChange       bool               `json:"dataChange"`
	// Stats is a JSON string: numRecords, minValues, maxValues, nullCount.
	Stats                   string                    `json:"stats,omitempty"`
	Tags                    map[string]*string        `json:"tags,omitempty"`
	DeletionVector          *DeletionVectorDescriptor `json:"deletionVector,omitempty"`
	BaseRowID               *int64                    `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64                    `json:"defaultRowCommitVersion,omitempty"`
	ClusteringProvider      *string                   `json:"clusteringProvider,omitempty"`
}

// Remove takes a data file out of the table (a tombstone).
type Remove struct {
	Path                    string                    `json:"path"`
	DeletionTimestamp       *int64                    `json:"deletionTimestamp,omitempty"`
	DataChange              bool                      `json:"dataChange"`
	ExtendedFileMetadata    *bool                     `json:"extendedFileMetadata,omitempty"`
	PartitionValues         map[string]*string        `json:"partitionValues,omitempty"`
	Size                    *int64                    `json:"size,omitempty"`
	Stats                   string                    `json:"stats,omitempty"`
	Tags                    map[string]*string        `json:"tags,omitempty"`
	DeletionVector          *DeletionVectorDescriptor `json:"deletionVector,omitempty"`
	BaseRowID               *int64                    `json:"baseRowId,omitempty"`
	DefaultRowCommitVersion *int64                    `json:"defaultRowCommitVersion,omitempty"`
}

// DeletionVectorDescriptor locates the deletion vector of a data file.
type DeletionVectorDescriptor struct {
	// StorageType is 'u' (relative path from a UUID), 'i' (inline) or 'p' (absolute path).
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	Offset         *int32 `json:"offset,omitempty"`
	SizeInBytes    int32  `json:"sizeInBytes"`
	Cardinality    int64  `json:"cardinality"`
	MaxRowIndex    *int64 `json:"maxRowIndex,omitempty"`
}

// UniqueID identifies a deletion vector; with the path it is the key under
// which add and remove actions reconcile.
func (d *DeletionVectorDescriptor) UniqueID() string {
	if d == nil {
		return ""
	}
	id := d.StorageType + d.PathOrInlineDv
	if d.Offset != nil {
		id += fmt.Sprintf("@%d", *d.Offset)
	}
	return id
}

// Metadata is the table's metaData action.
type Metadata struct {
	ID               string            `json:"id"`
	Name             *string           `json:"name,omitempty"`
	Description      *string           `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
	Configuration    map[string]string `json:"configuration"`
}

// Format names the data file format; it is always parquet.
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// MarshalJSON writes options as {} when there are none, as Spark does:
// some readers require the field.
func (f Format) MarshalJSON() ([]byte, error) {
	type plain Format
	if f.Options == nil {
		f.Options = map[string]string{}
	}
	return json.Marshal(plain(f))
}

// Protocol is the table's protocol action.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// MarshalJSON writes the feature lists exactly when the versions require
// them (reader 3, writer 7), even when empty, as strict readers expect.
func (p Protocol) MarshalJSON() ([]byte, error) {
	out := map[string]any{"minReaderVersion": p.MinReaderVersion, "minWriterVersion": p.MinWriterVersion}
	if p.MinReaderVersion >= 3 || p.ReaderFeatures != nil {
		out["readerFeatures"] = nonNil(p.ReaderFeatures)
	}
	if p.MinWriterVersion >= 7 || p.WriterFeatures != nil {
		out["writerFeatures"] = nonNil(p.WriterFeatures)
	}
	return json.Marshal(out)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Txn records the last version an application committed. lakesql writes
// appId = writer id and version = epoch in the same commit as the data: that
// is the exactly-once record.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// CDC is a change data file (Change Data Feed); it does not change the table.
type CDC struct {
	Path            string             `json:"path"`
	PartitionValues map[string]*string `json:"partitionValues"`
	Size            int64              `json:"size"`
	DataChange      bool               `json:"dataChange"`
	Tags            map[string]*string `json:"tags,omitempty"`
}

// DomainMetadata is the domainMetadata action.
type DomainMetadata struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// CheckpointMetadata heads a V2 checkpoint.
type CheckpointMetadata struct {
	Version int64              `json:"version"`
	Tags    map[string]*string `json:"tags,omitempty"`
}

// Sidecar names a file that holds part of a V2 checkpoint's actions.
type Sidecar struct {
	Path             string             `json:"path"`
	SizeInBytes      int64              `json:"sizeInBytes"`
	ModificationTime int64              `json:"modificationTime"`
	Tags             map[string]*string `json:"tags,omitempty"`
}

// Commit is one version of the log.
type Commit struct {
	Version int64
	Actions []Action
}

// ParseActions decodes newline-delimited JSON actions (a commit file, a JSON
// checkpoint or sidecar). Blank lines are skipped; a line that is not a JSON
// object is an error naming the line, wrapping ErrCorruptLog.
func ParseActions(data []byte) ([]Action, error) {
	var out []Action
	line := 0
	for len(data) > 0 {
		line++
		var raw []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			raw, data = data, nil
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		if raw[0] != '{' {
			return nil, corrupt("line %d: not a JSON object", line)
		}
		a, ok := decodeFileAction(raw)
		if !ok {
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, corrupt("line %d: %v", line, err)
			}
		}
		if err := a.validate(); err != nil {
			return nil, corrupt("line %d: %v", line, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// validate rejects actions that decode but cannot be applied.
func (a *Action) validate() error {
	switch {
	case a.Add != nil && a.Add.Path == "":
		return fmt.Errorf("add action without path")
	case a.Remove != nil && a.Remove.Path == "":
		return fmt.Errorf("remove action without path")
	case a.Txn != nil && a.Txn.AppID == "":
		return fmt.Errorf("txn action without appId")
	case a.MetaData != nil && a.MetaData.SchemaString == "":
		return fmt.Errorf("metaData action without schemaString")
	case a.CDC != nil && a.CDC.Path == "":
		return fmt.Errorf("cdc action without path")
	case a.Sidecar != nil && a.Sidecar.Path == "":
		return fmt.Errorf("sidecar action without path")
	}
	return nil
}

// EncodeActions writes actions as newline-delimited JSON, the commit file format.
func EncodeActions(actions []Action) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range actions {
		if err := enc.Encode(&actions[i]); err != nil {
			return nil, fmt.Errorf("encode action %d: %w", i, err)
		}
	}
	return buf.Bytes(), nil
}
