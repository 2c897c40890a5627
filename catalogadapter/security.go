package catalogadapter

import (
	"encoding/json"
	"fmt"
	"time"
)

// EncryptionLevel says how a table's files are encrypted.
type EncryptionLevel string

// Encryption levels.
const (
	EncryptionNone    EncryptionLevel = "none"
	EncryptionStorage EncryptionLevel = "storage" // server-side, with a KMS key
	EncryptionClient  EncryptionLevel = "client"  // client-side, with key metadata
)

// Encryption describes a table's encryption.
type Encryption struct {
	Level       EncryptionLevel
	KMSKeyID    string // storage level
	KeyMetadata []byte // client level
}

// Scope is what a credential allows.
type Scope string

// Credential scopes.
const (
	ScopeTableRead      Scope = "table:read"
	ScopeTableReadWrite Scope = "table:read-write"
	ScopeNamespaceRead  Scope = "namespace:read"
)

// Secret holds a credential's secret. Every printed or serialised form of it
// is redacted; only Reveal gives the value, so it cannot leak by accident
// into logs, errors or SHOW output.
type Secret struct{ value string }

// NewSecret wraps a secret value.
func NewSecret(v string) Secret { return Secret{value: v} }

// Reveal returns the secret value, for the code that must send it.
func (s Secret) Reveal() string { return s.value }

// IsZero tells whether no secret is set.
func (s Secret) IsZero() bool { return s.value == "" }

const redacted = "[REDACTED]"

// String implements fmt.Stringer with a redacted form.
func (s Secret) String() string { return redacted }

// GoString redacts %#v too.
func (s Secret) GoString() string { return redacted }

// Format redacts every verb, %x and %q included.
func (s Secret) Format(f fmt.State, _ rune) { fmt.Fprint(f, redacted) }

// MarshalJSON redacts the JSON form.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }

// MarshalText redacts encodings that use encoding.TextMarshaler.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Credential is a short-lived credential for a table.
type Credential struct {
	Token     Secret
	ExpiresAt time.Time // zero: never expires
	Scope     Scope
}

// Valid tells whether the credential can be used at now.
func (c Credential) Valid(now time.Time) bool {
	return c.ExpiresAt.IsZero() || now.Before(c.ExpiresAt)
}

// SecurityContext is a table's encryption and credential.
type SecurityContext struct {
	Encryption Encryption
	Credential Credential
}
