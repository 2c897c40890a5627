package deltalake

import (
	"context"
	"maps"
	"sync"

	"github.com/lakesql/lakesql/tableformat/delta"
)

// storageOps counts the calls a provider makes to its tables' storage, by
// operation (Options.WrapStorage).
type storageOps struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *storageOps) wrap(s delta.Storage) delta.Storage { return countedStorage{s, o} }

func (o *storageOps) add(op string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[op]++
}

// take returns the counts since the last take and starts again.
func (o *storageOps) take() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := maps.Clone(o.n)
	o.n = nil
	if n == nil {
		n = map[string]int{}
	}
	return n
}

type countedStorage struct {
	delta.Storage
	ops *storageOps
}

func (s countedStorage) Get(ctx context.Context, key string) ([]byte, error) {
	s.ops.add("Get")
	return s.Storage.Get(ctx, key)
}

func (s countedStorage) List(ctx context.Context, prefix, startAfter string) ([]delta.ObjectInfo, error) {
	s.ops.add("List")
	return s.Storage.List(ctx, prefix, startAfter)
}

func (s countedStorage) Stat(ctx context.Context, key string) (delta.ObjectInfo, error) {
	s.ops.add("Stat")
	return s.Storage.Stat(ctx, key)
}

func (s countedStorage) PutIfAbsent(ctx context.Context, key string, data []byte) error {
	s.ops.add("PutIfAbsent")
	return s.Storage.PutIfAbsent(ctx, key, data)
}

func (s countedStorage) Put(ctx context.Context, key string, data []byte) error {
	s.ops.add("Put")
	return s.Storage.Put(ctx, key, data)
}

func (s countedStorage) PutFile(ctx context.Context, key, path string) error {
	s.ops.add("PutFile")
	return s.Storage.PutFile(ctx, key, path)
}

func (s countedStorage) Delete(ctx context.Context, key string) error {
	s.ops.add("Delete")
	return s.Storage.Delete(ctx, key)
}

func (s countedStorage) LocalFile(ctx context.Context, key string) (string, error) {
	s.ops.add("LocalFile")
	return s.Storage.LocalFile(ctx, key)
}
