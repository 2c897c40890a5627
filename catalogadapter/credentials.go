package catalogadapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// CredentialSource mints credentials; a backend wraps its own in a
// CredentialCache.
type CredentialSource func(ctx context.Context, id TableIdent) (Credential, error)

// CredentialCache hands out a table's credential until shortly before it
// expires, then mints a new one. It never returns an expired credential.
type CredentialCache struct {
	source CredentialSource
	now    func() time.Time
	// margin renews a credential this long before it expires, so a caller
	// never gets one that dies in its hands.
	margin time.Duration

	mu    sync.Mutex
	cache map[string]Credential
}

// NewCredentialCache returns a cache over source; now is time.Now when nil.
func NewCredentialCache(source CredentialSource, now func() time.Time, margin time.Duration) *CredentialCache {
	if now == nil {
		now = time.Now
	}
	return &CredentialCache{source: source, now: now, margin: margin, cache: map[string]Credential{}}
}

// Get returns a credential for id that is valid for at least the margin.
func (c *CredentialCache) Get(ctx context.Context, id TableIdent) (Credential, error) {
	key := id.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if cred, ok := c.cache[key]; ok && cred.Valid(c.now().Add(c.margin)) {
		return cred, nil
	}
	delete(c.cache, key)
	cred, err := c.source(ctx, id)
	if err != nil {
		return Credential{}, err
	}
	if !cred.Valid(c.now()) {
		return Credential{}, errExpired
	}
	if cred.Valid(c.now().Add(c.margin)) {
		c.cache[key] = cred
	}
	return cred, nil
}

var errExpired = errors.New("credential source returned an expired credential")

// Local credentials: backends without a credential-vending catalog (local
// files, an embedded SQL catalog) mint a random token per table, so their
// callers exercise the same renewal path as with vended credentials.
const (
	localCredentialTTL    = 15 * time.Minute
	localCredentialMargin = time.Minute
)

// NewLocalCredentialCache returns a cache of locally minted credentials
// that live 15 minutes and are renewed a minute before they expire; now is
// time.Now when nil.
func NewLocalCredentialCache(now func() time.Time) *CredentialCache {
	if now == nil {
		now = time.Now
	}
	mint := func(context.Context, TableIdent) (Credential, error) {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return Credential{}, fmt.Errorf("mint credential: %w", err)
		}
		return Credential{
			Token:     NewSecret(hex.EncodeToString(b[:])),
			ExpiresAt: now().Add(localCredentialTTL),
			Scope:     ScopeTableReadWrite,
		}, nil
	}
	return NewCredentialCache(mint, now, localCredentialMargin)
}
