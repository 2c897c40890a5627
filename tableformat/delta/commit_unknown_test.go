package delta

import (
	"context"
	"errors"
	"testing"
)

// unknownStore fails PutIfAbsent as a timed-out request would: after the
// entry landed (landFirst) or before, and can fail reads as well.
type unknownStore struct {
	*LocalStorage
	failPuts  int  // puts still to fail
	landFirst bool // a failing put lands its entry first
	failReads bool
	puts      int
}

var errTimeout = errors.New("injected: request timed out")

func (s *unknownStore) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	s.puts++
	if s.failPuts == 0 {
		return s.LocalStorage.PutIfAbsent(ctx, key, data)
	}
	s.failPuts--
	if s.landFirst {
		if err := s.LocalStorage.PutIfAbsent(ctx, key, data); err != nil {
			return err
		}
	}
	return errTimeout
}

func (s *unknownStore) Get(ctx context.Context, key string) ([]byte, error) {
	if s.failReads {
		return nil, errTimeout
	}
	return s.LocalStorage.Get(ctx, key)
}

// TestCommitStateUnknown: a put whose outcome is unknown is resolved by
// reading the entry back, never guessed.
func TestCommitStateUnknown(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		store      unknownStore
		otherFirst bool // another writer took the version before our put
		wantErr    error
		wantPuts   int
	}{
		{name: "landed then timed out", store: unknownStore{failPuts: 1, landFirst: true}, wantPuts: 1},
		{name: "timed out before landing", store: unknownStore{failPuts: 2}, wantPuts: 3},
		{name: "never lands", store: unknownStore{failPuts: 100}, wantErr: errTimeout, wantPuts: unknownRetries + 1},
		{name: "landed and cannot be read", store: unknownStore{failPuts: 1, landFirst: true, failReads: true}, wantErr: ErrCommitUnknown, wantPuts: 1},
		{name: "another writer won", store: unknownStore{failPuts: 1}, otherFirst: true, wantErr: &ConflictError{}, wantPuts: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			local, table := ctNewTable(t, nil)
			snap, err := table.Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.otherFirst {
				if _, err := snap.Commit(ctx, []Action{{Add: ctAdd("other.parquet")}}, CommitOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			store := tc.store
			store.LocalStorage = local
			snap.table = NewTable(&store)
			_, err = snap.Commit(ctx, []Action{{Add: ctAdd("ours.parquet")}}, CommitOptions{})
			var ce *ConflictError
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("commit: %v", err)
			case tc.wantErr != nil && errors.As(tc.wantErr, &ce):
				if !errors.As(err, &ce) {
					t.Fatalf("commit: %v, want a conflict", err)
				}
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("commit: %v, want %v", err, tc.wantErr)
			}
			if store.puts != tc.wantPuts {
				t.Errorf("%d puts, want %d", store.puts, tc.wantPuts)
			}
			latest, err := NewTable(local).Latest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantVersion := int64(1)
			if tc.wantErr == errTimeout {
				wantVersion = 0
			}
			if latest.Version != wantVersion {
				t.Errorf("table at version %d, want %d", latest.Version, wantVersion)
			}
			if tc.wantErr == nil {
				if got := ctPaths(latest); len(got) != 1 || got[0] != "ours.parquet" {
					t.Errorf("files %v, want [ours.parquet] once", got)
				}
			}
		})
	}
}
